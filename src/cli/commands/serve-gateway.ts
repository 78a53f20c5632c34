/**
 * `sciencegate serve gateway`: the governed MCP gateway on stdin/stdout for one MCP client (a desktop
 * assistant, a Python agent, the MCP Inspector). stdout carries only the protocol; diagnostics go to
 * stderr. The runtime is closed when stdin ends, the client closes the session, or on SIGTERM/SIGINT.
 */
import { resolve } from "node:path";
import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  createElicitationApproval,
  createGatewayServer,
  type OutOfBandApproval,
  shellQuote,
} from "../../gateway/index.js";
import { resolveGovernanceStorage } from "../../runtime/index.js";
import type { CliIo, ExitCode } from "../io.js";
import { type CliRuntime, openRuntime } from "../runtime.js";

/** Options of `sciencegate serve gateway`. */
export interface ServeGatewayOptions {
  configPath?: string | undefined;
  manifestDirs?: string[] | undefined;
  /** List every allowed tool from the start (clients with a fixed tool table). */
  eager: boolean;
  /** The governance session of the client. @default `gateway:<uuid>` */
  session?: string | undefined;
}

/** The process the gateway serves on. @default the real stdin, stdout and signals */
export interface GatewayProcess {
  stdin: Readable;
  stdout: Writable;
  /** Calls `listener` with the signal's name on SIGTERM and SIGINT; returns a function that stops listening. */
  onShutdownSignal(listener: (signal: string) => void): () => void;
}

/**
 * Serves the gateway until the client leaves or the process is told to stop, then closes the session
 * (a running call is cancelled and audited) and the runtime (every row written, every child stopped).
 * @param io the CLI's environment and stderr (its stdout is not used: stdout is the protocol)
 * @param options config, manifests, eager listing, session id
 * @param process where the protocol runs
 * @returns 0 after a clean shutdown
 * @throws GovernanceError `INVALID_CONFIG` / `INVALID_MANIFEST` from the runtime, before anything is served
 */
export async function serveGatewayCommand(
  io: CliIo,
  options: ServeGatewayOptions,
  process: GatewayProcess = realProcess(),
): Promise<ExitCode> {
  const restoreConsole = consoleToStderr();
  try {
    const runtime = await openRuntime(io, {
      ...(options.configPath ? { configPath: options.configPath } : {}),
      ...(options.manifestDirs ? { manifestDirs: options.manifestDirs } : {}),
    });
    const gateway = createGatewayServer(runtime, {
      eager: options.eager,
      approval: createElicitationApproval(runtime, { outOfBand: outOfBandOf(io, options, runtime) }),
      onError: (error) =>
        io.stderr(`sciencegate gateway: ${error instanceof Error ? error.message : error}\n`),
    });
    // Listening until the runtime is closed: a second signal during shutdown must not cut the ledger's flush.
    const shutdown = untilShutdown(process);
    try {
      const session = await gateway.connect(new StdioServerTransport(process.stdin, process.stdout), {
        sessionId: options.session,
      });
      io.stderr(
        `sciencegate gateway: serving session ${session.sessionId} on stdio (${runtime.configSource})\n`,
      );
      const reason = await Promise.race([
        shutdown.requested,
        session.ended.then(() => "the client closed the session"),
      ]);
      io.stderr(`sciencegate gateway: stopping (${reason})\n`);
    } finally {
      try {
        await gateway.close();
      } finally {
        await runtime.close();
        shutdown.stop();
      }
    }
    io.stderr("sciencegate gateway: stopped\n");
  } finally {
    restoreConsole();
  }
  return 0;
}

/**
 * The `sciencegate grants` commands that reach this gateway: its data directory, its config and
 * manifests (or its working directory, where it found both a `science.toml` and a config), and
 * `grants mode` only when the session state is shared through PostgreSQL.
 */
function outOfBandOf(io: CliIo, options: ServeGatewayOptions, runtime: CliRuntime): OutOfBandApproval {
  const found = [runtime.config.path, runtime.science?.path].filter((p) => p !== undefined);
  const config = options.configPath
    ? resolve(io.cwd, options.configPath)
    : found.length === 1
      ? found[0]
      : undefined;
  const cd = !options.configPath && found.length > 1 ? `cd ${shellQuote(io.cwd)} && ` : "";
  return {
    cli: `${cd}SCIENCEGATE_HOME=${shellQuote(runtime.dataDir)} sciencegate`,
    catalogArgs: [
      ...(config === undefined ? [] : ["--config", shellQuote(config)]),
      ...(options.manifestDirs ?? []).flatMap((dir) => ["--manifests", shellQuote(resolve(io.cwd, dir))]),
    ],
    modesShared: resolveGovernanceStorage({}, io.env).postgres !== undefined,
  };
}

/** Settles with the reason when stdin ends or closes, or on SIGTERM/SIGINT; `stop` removes the listeners. */
function untilShutdown(process: GatewayProcess): { requested: Promise<string>; stop: () => void } {
  let stop = () => {};
  const requested = new Promise<string>((resolve) => {
    const onEnd = () => resolve("stdin closed: the client left");
    process.stdin.once("end", onEnd);
    process.stdin.once("close", onEnd);
    const stopSignals = process.onShutdownSignal((signal) => resolve(signal));
    stop = () => {
      process.stdin.off("end", onEnd);
      process.stdin.off("close", onEnd);
      stopSignals();
    };
  });
  return { requested, stop };
}

function realProcess(): GatewayProcess {
  return {
    stdin: globalThis.process.stdin,
    stdout: globalThis.process.stdout,
    onShutdownSignal(listener) {
      const onTerm = () => listener("SIGTERM");
      const onInt = () => listener("SIGINT");
      globalThis.process.on("SIGTERM", onTerm);
      globalThis.process.on("SIGINT", onInt);
      return () => {
        globalThis.process.off("SIGTERM", onTerm);
        globalThis.process.off("SIGINT", onInt);
      };
    },
  };
}

/**
 * Sends `console.log`/`info`/`debug` to stderr while the protocol owns stdout: one stray line from any
 * library would be a malformed message to the client.
 * @returns a function that restores them
 */
function consoleToStderr(): () => void {
  const { log, info, debug } = console;
  console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args);
  return () => {
    console.log = log;
    console.info = info;
    console.debug = debug;
  };
}
