/**
 * `sciencegate serve gateway`: the governed MCP gateway on stdin/stdout for one MCP client (a desktop
 * assistant, a Python agent, the MCP Inspector), or with `--http` over Streamable HTTP for many. On
 * stdio, stdout carries only the protocol; diagnostics go to stderr. The runtime is closed when stdin
 * ends or the client closes the session (stdio), or on SIGTERM/SIGINT.
 */
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import type { Readable, Writable } from "node:stream";
import { GovernanceError, openPostgres, type PostgresDatabase } from "../../core/index.js";
import {
  type ConversationStateStore,
  createElicitationApproval,
  createGatewayServer,
  GATEWAY_TOKEN_ENV,
  type GatewayHttpOptions,
  type GatewayHttpServer,
  type GatewayServer,
  type OutOfBandApproval,
  PostgresConversationStateStore,
  resolveGatewayHttpOptions,
  serveGatewayHttp,
  shellQuote,
} from "../../gateway/index.js";
import { resolveGovernanceStorage } from "../../runtime/index.js";
import type { CliIo, ExitCode } from "../io.js";
import { type OAuthFlags, oauthOptionsOf } from "../oauth-flags.js";
import { type CliRuntime, openRuntime } from "../runtime.js";
import { onShutdownSignal } from "../shutdown-signals.js";
import { terminalLine } from "../terminal-text.js";

/** Options of `sciencegate serve gateway`. */
export interface ServeGatewayOptions {
  configPath?: string | undefined;
  manifestDirs?: string[] | undefined;
  /** List every allowed tool from the start (clients with a fixed tool table). */
  eager: boolean;
  /** `--upstream-names`: name tools by their servers' own names where unambiguous. @default false */
  upstreamNames?: boolean | undefined;
  /** The governance session of the client (stdio only). @default `gateway:<uuid>` */
  session?: string | undefined;
  /** Serve Streamable HTTP on `[host:]port` instead of stdio (host 127.0.0.1 unless given). */
  http?: string | undefined;
  /** Browser origins allowed besides same-origin loopback (`--allow-origin`, HTTP only). */
  allowOrigins?: string[] | undefined;
  /** Host names allowed in `Host` besides the bound ones (`--allow-host`, HTTP only). */
  allowHosts?: string[] | undefined;
  /** `--max-sessions N` (HTTP only): sessions open at once. */
  maxSessions?: string | undefined;
  /** `--max-sessions-per-client N` (HTTP only): sessions of one client at once. */
  maxSessionsPerClient?: string | undefined;
  /** `--session-idle-ms N` (HTTP only): how long a session may stay idle. */
  sessionIdleMs?: string | undefined;
  /** `--approval-wait-ms N`: how long an approval question waits for its human. */
  approvalWaitMs?: string | undefined;
  /** `--oauth-*` (HTTP only): accept an identity provider's access tokens instead of the shared token. */
  oauth?: OAuthFlags | undefined;
}

/** The process the gateway serves on. @default the real stdin, stdout and signals */
export interface GatewayProcess {
  stdin: Readable;
  stdout: Writable;
  /** Calls `listener` with the signal's name on SIGTERM and SIGINT; returns a function that stops listening. */
  onShutdownSignal(listener: (signal: string) => void): () => void;
}

/**
 * Serves the gateway until the client leaves (stdio) or the process is told to stop, then closes the
 * sessions (a running call is cancelled and audited) and the runtime (every row written, every child
 * stopped).
 * @param io the CLI's environment (`SCIENCEGATE_GATEWAY_TOKEN`) and stderr (on stdio its stdout is not
 *   used: stdout is the protocol)
 * @param options config, manifests, eager listing, session id or HTTP address and allow-lists
 * @param process where the protocol runs
 * @returns 0 after a clean shutdown
 * @throws GovernanceError `INVALID_CONFIG` for a bad `--http` address, a limit that is not a positive
 *   whole number, a non-loopback bind without a token (before the runtime starts), or from the runtime /
 *   `INVALID_MANIFEST`, before anything is served
 */
export async function serveGatewayCommand(
  io: CliIo,
  options: ServeGatewayOptions,
  process: GatewayProcess = realProcess(),
): Promise<ExitCode> {
  const http = options.http === undefined ? undefined : httpOptions(io, options, options.http);
  const waitTimeoutMs = wholeNumber("--approval-wait-ms", options.approvalWaitMs);
  const { postgres } = resolveGovernanceStorage({}, io.env);
  const requestStateSecret = requestStateSecretOf(io, postgres !== undefined);
  const restoreConsole = http ? () => {} : consoleToStderr();
  try {
    const runtime = await openRuntime(io, {
      ...(options.configPath ? { configPath: options.configPath } : {}),
      ...(options.manifestDirs ? { manifestDirs: options.manifestDirs } : {}),
      relaysSampling: true,
    });
    let conversations: { db: PostgresDatabase; store: ConversationStateStore } | undefined;
    try {
      conversations = postgres && (await openConversations(postgres.url));
    } catch (error) {
      await runtime.close();
      throw error;
    }
    const gateway = createGatewayServer({
      governance: runtime,
      requestStateSecret,
      ...(conversations ? { conversations: conversations.store } : {}),
      eager: options.eager,
      toolNames: options.upstreamNames === true ? "upstream" : "qualified",
      approval: createElicitationApproval({
        governance: runtime,
        outOfBand: outOfBandOf(io, options, runtime),
        waitTimeoutMs,
      }),
      onError: reportTo(io),
      researchObjects: true,
    });
    // Listening until the runtime is closed: a second signal during shutdown must not cut the ledger's flush.
    const shutdown = untilShutdown(process, { stdin: http === undefined });
    let listener: GatewayHttpServer | undefined;
    try {
      if (http) listener = await listenHttp(io, gateway, http, runtime.configSource);
      const reason = listener
        ? await shutdown.requested
        : await serveStdio(io, gateway, options.session, process, shutdown.requested, runtime.configSource);
      io.stderr(`sciencegate gateway: stopping (${reason})\n`);
    } finally {
      try {
        await listener?.close();
      } finally {
        try {
          await gateway.close();
        } finally {
          try {
            await conversations?.store.close();
            await conversations?.db.close();
          } finally {
            await runtime.close();
            shutdown.stop();
          }
        }
      }
    }
    io.stderr("sciencegate gateway: stopped\n");
  } finally {
    restoreConsole();
  }
  return 0;
}

/**
 * The environment variable holding the secret (at least 32 bytes) that signs a 2026-07-28 client's
 * approval round trips; every replica that may receive the retry needs the same one.
 */
export const REQUEST_STATE_SECRET_ENV = "SCIENCEGATE_REQUEST_STATE_SECRET";

/**
 * The request state secret of the environment, checked before anything starts.
 * @param shared whether the state is shared with other replicas (PostgreSQL): without a secret, a
 *   round trip asked here cannot be resumed on another replica, which the operator is told
 * @returns the secret, or `undefined` (a random one for this process)
 * @throws GovernanceError `INVALID_CONFIG` for a secret shorter than 32 bytes
 */
function requestStateSecretOf(io: CliIo, shared: boolean): string | undefined {
  const secret = io.env[REQUEST_STATE_SECRET_ENV];
  if (secret === undefined || secret === "") {
    if (shared) {
      io.stderr(
        `sciencegate gateway: warning: ${REQUEST_STATE_SECRET_ENV} is not set: this process signs approval round trips with a random secret of its own, so a 2026-07-28 client's approval asked here cannot be answered on another replica; give every replica the same secret of at least 32 bytes (e.g. openssl rand -hex 32).\n`,
      );
    }
    return undefined;
  }
  if (Buffer.byteLength(secret, "utf8") < 32) {
    // The message never shows the secret, only its length.
    throw new GovernanceError(
      "INVALID_CONFIG",
      `${REQUEST_STATE_SECRET_ENV} must be at least 32 bytes (it signs approval round trips; a short one can be guessed); got ${Buffer.byteLength(secret, "utf8")}. Generate one with: openssl rand -hex 32.`,
      { data: { field: REQUEST_STATE_SECRET_ENV } },
    );
  }
  return secret;
}

/** The conversations of 2026-07-28 clients in the shared database, so that every replica sees them. */
async function openConversations(url: string) {
  const db = await openPostgres(url, { maxConnections: 2 });
  try {
    return { db, store: await PostgresConversationStateStore.open(db) };
  } catch (error) {
    await db.close();
    throw error;
  }
}

/** One session on stdin/stdout until the client leaves or a signal. @returns why it stops */
async function serveStdio(
  io: CliIo,
  gateway: GatewayServer,
  sessionId: string | undefined,
  process: GatewayProcess,
  shutdown: Promise<string>,
  configSource: string,
): Promise<string> {
  // Named here, so that the log says which session a 2025-11-25 client gets before it connects.
  const id = sessionId?.trim() || `gateway:${randomUUID()}`;
  const connection = gateway.connectStdio(process, { sessionId: id });
  io.stderr(
    `sciencegate gateway: serving session ${id} on stdio (2025-11-25 and 2026-07-28 clients; ${configSource})\n`,
  );
  return Promise.race([shutdown, connection.ended.then(() => "the client closed the session")]);
}

/** Writes a failure no client can be told about to stderr. */
function reportTo(io: CliIo): (error: unknown) => void {
  // A failure may quote a client's or a server's text: printed inert.
  return (error) =>
    io.stderr(terminalLine`sciencegate gateway: ${error instanceof Error ? error.message : error}\n`);
}

/** Listens for Streamable HTTP and says where on stderr. */
async function listenHttp(
  io: CliIo,
  gateway: GatewayServer,
  options: GatewayHttpOptions,
  configSource: string,
): Promise<GatewayHttpServer> {
  const server = await serveGatewayHttp(gateway, {
    ...options,
    onError: reportTo(io),
  });
  const auth = options.oauth
    ? `OAuth access tokens of ${options.oauth.issuer}, metadata at ${server.resourceMetadataUrl}`
    : options.token
      ? `bearer token from ${GATEWAY_TOKEN_ENV}`
      : "no token: loopback only";
  const limits = resolveGatewayHttpOptions(options);
  const sessions = `at most ${limits.maxSessions} sessions, ${limits.maxSessionsPerClient} per client, idle ${limits.idleTimeoutMs} ms`;
  io.stderr(`sciencegate gateway: listening on ${server.url} (${auth}; ${sessions}; ${configSource})\n`);
  return server;
}

/**
 * The HTTP options of the command line, checked before the runtime starts.
 * @throws GovernanceError `INVALID_CONFIG` for an address that is not `[host:]port`, or what
 *   `resolveGatewayHttpOptions` refuses (a non-loopback bind without `SCIENCEGATE_GATEWAY_TOKEN`)
 */
function httpOptions(io: CliIo, options: ServeGatewayOptions, address: string): GatewayHttpOptions {
  const { host, port } = parseListenAddress(address);
  const oauth = oauthOptionsOf(options.oauth ?? {});
  const http: GatewayHttpOptions = {
    host,
    port,
    // With an identity provider the shared token is not used (one way of authenticating).
    ...(oauth ? { oauth } : { token: io.env[GATEWAY_TOKEN_ENV] || undefined }),
    allowedOrigins: options.allowOrigins,
    allowedHosts: options.allowHosts,
    maxSessions: wholeNumber("--max-sessions", options.maxSessions),
    maxSessionsPerClient: wholeNumber("--max-sessions-per-client", options.maxSessionsPerClient),
    idleTimeoutMs: wholeNumber("--session-idle-ms", options.sessionIdleMs),
  };
  resolveGatewayHttpOptions(http);
  return http;
}

/**
 * A flag's positive whole number.
 * @returns the number, or `undefined` when the flag is absent
 * @throws GovernanceError `INVALID_CONFIG` naming the flag
 */
function wholeNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number <= 0) {
    throw new GovernanceError("INVALID_CONFIG", `${flag} takes a positive whole number; got '${value}'.`, {
      data: { field: flag, value },
    });
  }
  return number;
}

/**
 * `--http`'s `[host:]port`: `8080`, `127.0.0.1:8080`, `0.0.0.0:0`, `[::1]:8080`.
 * @throws GovernanceError `INVALID_CONFIG` naming the value and the expected form
 */
export function parseListenAddress(value: string): { host: string; port: number } {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):)?(\d{1,5})$/.exec(value.trim());
  const port = Number(match?.[2]);
  if (!match || port > 65_535) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `--http takes [host:]port, e.g. 8080, 127.0.0.1:8080 or [::1]:0 (0: a free port); got '${value}'.`,
      { data: { field: "--http", value } },
    );
  }
  const host = match[1]?.replace(/^\[(.*)\]$/, "$1") ?? "127.0.0.1";
  return { host, port };
}

/**
 * The `sciencegate grants` commands that reach this gateway: its data directory, its config and
 * manifests (or its working directory, where it found both a `science.toml` and a config), and
 * `grants mode` only when the session state is shared through PostgreSQL. The complete commands go
 * to stderr (the operator's log); the client is told only their short form.
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
    report: (line) => io.stderr(`sciencegate gateway: ${line}\n`),
  };
}

/**
 * Settles with the reason on SIGTERM/SIGINT, or (stdio) when stdin ends or closes; `stop` removes the
 * listeners.
 */
function untilShutdown(
  process: GatewayProcess,
  watch: { stdin: boolean },
): { requested: Promise<string>; stop: () => void } {
  let stop = () => {};
  const requested = new Promise<string>((resolve) => {
    const onEnd = () => resolve("stdin closed: the client left");
    if (watch.stdin) {
      process.stdin.once("end", onEnd);
      process.stdin.once("close", onEnd);
    }
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
  return { stdin: globalThis.process.stdin, stdout: globalThis.process.stdout, onShutdownSignal };
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
