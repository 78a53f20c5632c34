/**
 * `sciencegate console`: the Sciencegate console in the browser over the same data directory (or the
 * PostgreSQL database `SCIENCEGATE_DATABASE_URL` names) and config the app uses. Read-only unless
 * `--writable`; loopback unless `--host` names another address, which needs `SCIENCEGATE_CONSOLE_TOKEN`.
 */
import {
  assertConsoleBind,
  CONSOLE_TOKEN_ENV,
  type ConsoleServer,
  serveConsole,
} from "../../console/index.js";
import { GovernanceError } from "../../core/index.js";
import type { CliIo, ExitCode } from "../io.js";
import { type OAuthFlags, oauthOptionsOf } from "../oauth-flags.js";
import { openRuntime } from "../runtime.js";
import { onShutdownSignal } from "../shutdown-signals.js";

/** Options of `sciencegate console`. */
export interface ConsoleCommandOptions {
  configPath?: string | undefined;
  manifestDirs?: string[] | undefined;
  /** @default "127.0.0.1" */
  host?: string | undefined;
  /** A port number as given; 0 picks a free one. @default "4680" */
  port?: string | undefined;
  writable: boolean;
  allowHosts?: string[] | undefined;
  /** `--public-url`: the console's address as browsers reach it (behind a proxy); where authorization servers send them back. */
  publicUrl?: string | undefined;
  /** `--oauth-*`: accept an identity provider's access tokens (the `administer` scope) instead of the token. */
  oauth?: OAuthFlags | undefined;
}

/** Signals the console stops on. @default the real SIGTERM and SIGINT */
export interface ConsoleProcess {
  onShutdownSignal(listener: (signal: string) => void): () => void;
}

/**
 * Serves the console until SIGTERM or SIGINT, then stops listening and closes the runtime.
 * @param io environment (`SCIENCEGATE_CONSOLE_TOKEN`), stdout (the URL) and stderr
 * @param options config, manifests, address, writes, allowed host names
 * @param process the shutdown signals
 * @returns 0 after a clean shutdown
 * @throws GovernanceError `INVALID_CONFIG` for a bad port, or a non-loopback host without a token
 */
export async function consoleCommand(
  io: CliIo,
  options: ConsoleCommandOptions,
  process: ConsoleProcess = realProcess(),
): Promise<ExitCode> {
  const port = parsePort(options.port ?? "4680");
  const oauth = oauthOptionsOf(options.oauth ?? {});
  // With an identity provider the console's token is not used (one way of authenticating).
  const token = oauth ? undefined : io.env[CONSOLE_TOKEN_ENV] || undefined;
  // Refused before the runtime starts any server.
  if (!oauth) assertConsoleBind(options.host ?? "127.0.0.1", token);
  const runtime = await openRuntime(io, {
    ...(options.configPath ? { configPath: options.configPath } : {}),
    ...(options.manifestDirs ? { manifestDirs: options.manifestDirs } : {}),
  });
  let server: ConsoleServer | undefined;
  let stopSignals = () => {};
  try {
    const stopped = new Promise<string>((resolve) => {
      stopSignals = process.onShutdownSignal(resolve);
    });
    server = await serveConsole({
      governance: runtime,
      host: options.host ?? "127.0.0.1",
      port,
      writable: options.writable,
      allowedHosts: options.allowHosts ?? [],
      env: io.env,
      ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
      ...(token ? { token } : {}),
      ...(oauth ? { oauth } : {}),
    });
    io.stdout(
      `Sciencegate console: ${server.url}/${token ? "?token=<your SCIENCEGATE_CONSOLE_TOKEN>" : ""}\n`,
    );
    io.stderr(
      `sciencegate console: ${options.writable ? "writable" : "read-only"}; data ${runtime.dataDir}; config ${runtime.configSource}\n`,
    );
    const reason = await stopped;
    io.stderr(`sciencegate console: stopping (${reason})\n`);
  } finally {
    stopSignals();
    try {
      await server?.close();
    } finally {
      await runtime.close();
    }
  }
  return 0;
}

function parsePort(value: string): number {
  const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!(port >= 0 && port <= 65_535)) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `--port takes a number from 0 to 65535 (0: a free port); got '${value}'.`,
      {
        data: { field: "--port", value },
      },
    );
  }
  return port;
}

function realProcess(): ConsoleProcess {
  return { onShutdownSignal };
}
