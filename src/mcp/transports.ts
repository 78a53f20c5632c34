/** The real MCP client transports of the official SDK, built from a `ServerConfig`. */
import type { Stream } from "node:stream";
import {
  type AuthProvider,
  type OAuthClientProvider,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Transport,
} from "@modelcontextprotocol/client";
import { DEFAULT_INHERITED_ENV_VARS, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { ServerConfig } from "../config/index.js";
import { GovernanceError, redactUrl } from "../core/index.js";
import { EventStreamFetch } from "./event-stream-fetch.js";
import { createListenFirstFetch } from "./listen-first-fetch.js";
import { createCappedFetch } from "./response-cap.js";
import { SentCredentials } from "./sent-credentials.js";
import { StdioChildTransport } from "./stdio-child-transport.js";

/** Options of {@link createSdkTransport}. */
export interface SdkTransportOptions {
  /**
   * The environment stdio children inherit from: only the SDK's safe defaults (PATH, HOME, ...) and
   * variables starting with `SCIENCEGATE_`, `SCIENCE_AGENT_` or `NCBI_` pass, so that a third-party
   * server never sees the app's API keys. The server's own `env` is laid over it.
   * @default process.env
   */
  env?: Record<string, string | undefined>;
  /**
   * Authorizes an sse or http server's requests (OAuth tokens, refreshed when they expire).
   * @default none: the configured headers only
   */
  authProvider?: AuthProvider | OAuthClientProvider | undefined;
}

/** Prefixes of variables that Sciencegate's own servers read and every stdio child inherits. */
export const INHERITED_ENV_PREFIXES = ["SCIENCEGATE_", "SCIENCE_AGENT_", "NCBI_"] as const;

/**
 * The part of `env` a stdio child inherits.
 * @param env the parent environment
 * @returns the SDK's default variables and the Sciencegate-prefixed ones
 */
export function inheritedEnvironment(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined || value.startsWith("()")) continue;
    if (DEFAULT_INHERITED_ENV_VARS.includes(key) || INHERITED_ENV_PREFIXES.some((p) => key.startsWith(p))) {
      out[key] = value;
    }
  }
  return out;
}

/**
 * Builds the transport for one server: `StdioChildTransport` (the SDK's stdio transport, stderr piped so
 * the pool can keep its tail, and a child that keeps the process alive only while a request waits for
 * it), `SSEClientTransport` or `StreamableHTTPClientTransport` (headers sent on every request through
 * `requestInit`; answers read under the call's response cap, see `createCappedFetch`; event streams that
 * keep the process alive only while a request waits, see `EventStreamFetch`; the first requests held
 * until the event stream is open, see `createListenFirstFetch`; OAuth through the auth provider; the
 * credentials sent noted for redaction, see `SentCredentials`).
 * Nothing is started or spawned here.
 * @param config the server's configuration
 * @param options base environment for stdio children, auth provider for sse/http
 * @returns an unstarted transport
 * @throws GovernanceError `INVALID_CONFIG` when a stdio server has no `command` or an sse/http server has
 *   no valid `url`
 */
export function createSdkTransport(config: ServerConfig, options: SdkTransportOptions = {}): Transport {
  if (config.transport === "stdio") {
    if (!config.command) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        `MCP server '${config.id}' uses stdio but has no "command"; set mcpServers.${config.id}.command.`,
      );
    }
    return new StdioChildTransport({
      command: config.command,
      args: config.args,
      env: { ...inheritedEnvironment(options.env ?? process.env), ...config.env },
      cwd: config.cwd,
    });
  }
  const url = parseUrl(config);
  const requestInit: RequestInit = { headers: { ...config.headers } };
  const streams = new EventStreamFetch();
  const credentials = new SentCredentials();
  for (const value of Object.values(config.headers)) credentials.addHeaderValue(value);
  const sent = credentials.observe(streams.fetch);
  const auth = options.authProvider === undefined ? {} : { authProvider: options.authProvider };
  // SSE answers arrive on the one GET stream opened at connect time, outside any call, so no call's
  // cap applies to them: only the streamable HTTP transport reads answers under the cap.
  const transport =
    config.transport === "sse"
      ? new SSEClientTransport(url, { requestInit, fetch: sent, ...auth })
      : new StreamableHTTPClientTransport(url, {
          requestInit,
          fetch: createCappedFetch(createListenFirstFetch(sent)),
          ...auth,
        });
  eventStreams.set(transport, streams);
  sentCredentials.set(transport, credentials);
  return transport;
}

/** The credentials each HTTP transport sent, for `credentialsSentBy`. */
const sentCredentials = new WeakMap<Transport, SentCredentials>();

/**
 * The credentials a transport sent its server (configured headers, `Authorization` values), to be
 * redacted from what the server answers.
 * @param transport any transport
 * @returns the credentials, or undefined for transports that send none of their own (stdio, in memory)
 */
export function credentialsSentBy(transport: Transport): SentCredentials | undefined {
  return sentCredentials.get(transport);
}

/** The event-stream fetch of each HTTP transport, for `holdTransport`. */
const eventStreams = new WeakMap<Transport, EventStreamFetch>();

/**
 * The pid of the child behind a stdio transport while it runs.
 * @param transport any transport
 * @returns the pid, or undefined for other transports and for a child that has not started or has exited
 */
export function childPidOf(transport: Transport): number | undefined {
  if (transport instanceof StdioChildTransport) return transport.pid;
  return transport instanceof StdioClientTransport ? (transport.pid ?? undefined) : undefined;
}

/**
 * The stderr stream of a stdio transport, handed out before `start()` so that no early line (a startup
 * failure) is lost (the SDK's, with `stderr: "pipe"`, likewise).
 * @param transport any transport
 * @returns the stream, or null for other transports and for stdio children whose stderr is not piped
 */
export function stderrOf(transport: Transport): Stream | null {
  if (transport instanceof StdioChildTransport) return transport.stderr;
  return transport instanceof StdioClientTransport ? transport.stderr : null;
}

/**
 * Keeps the process alive for a transport while a request waits on it: a stdio child (see
 * `StdioChildTransport`), an HTTP transport's event stream (see `EventStreamFetch`).
 * @param transport any transport
 * @returns the release; a no-op for transports that hold nothing of their own
 */
export function holdTransport(transport: Transport): () => void {
  if (transport instanceof StdioChildTransport) return transport.hold();
  return eventStreams.get(transport)?.hold() ?? (() => undefined);
}

function parseUrl(config: ServerConfig): URL {
  try {
    if (config.url) return new URL(config.url);
  } catch {
    // reported below with the server and field named
  }
  throw new GovernanceError(
    "INVALID_CONFIG",
    `MCP server '${config.id}' uses ${config.transport} but has no valid "url" (got ${JSON.stringify(config.url === undefined ? null : redactUrl(config.url))}); set mcpServers.${config.id}.url.`,
  );
}

/**
 * Whether answers of this transport arrive over streamable HTTP (through the capped fetch, with each
 * request's own response stream).
 * @param transport any transport
 * @returns true for the SDK's streamable HTTP transport
 */
export function isStreamableHttp(transport: Transport): boolean {
  return transport instanceof StreamableHTTPClientTransport;
}

/**
 * Whether the transport reaches its server over the network (streamable HTTP or SSE), where the SDK
 * negotiates the protocol revision itself; any other transport (stdio, in memory) carries one process
 * or peer whose life a probe must not spend.
 * @param transport any transport
 * @returns true for the SDK's HTTP transports
 */
export function isNetworkTransport(transport: Transport): boolean {
  return transport instanceof StreamableHTTPClientTransport || transport instanceof SSEClientTransport;
}

/**
 * Whether the transport is the SDK's SSE transport, which speaks only 2025-era revisions.
 * @param transport any transport
 * @returns true for `SSEClientTransport`
 */
export function isSseTransport(transport: Transport): boolean {
  return transport instanceof SSEClientTransport;
}
