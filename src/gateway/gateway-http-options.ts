/**
 * The options of `serveGatewayHttp`: bind address, authentication, allow-lists and every resource
 * bound, with their defaults and the checks that run before anything listens.
 */
import type { Clock } from "../core/index.js";
import { GovernanceError } from "../core/index.js";
import { assertSafeBind, type GatewayAuthenticator, normalizeOrigin } from "./gateway-http-guard.js";
import { checkOAuthResourceOptions, type OAuthResourceOptions } from "./oauth-resource.js";

/** Options of `serveGatewayHttp`. */
export interface GatewayHttpOptions {
  /** The address to bind. Anything but loopback needs `token`. @default "127.0.0.1" */
  host?: string | undefined;
  /** The port; 0 takes a free one (read it from `url`). @default 0 */
  port?: number | undefined;
  /**
   * The bearer token every request must carry (`Authorization: Bearer <token>`), at least 16
   * characters; its holder is every request's principal. @default none: allowed on a loopback bind only
   */
  token?: string | undefined;
  /**
   * The app's own authentication, instead of `token`: the principal of each request (per-user tokens,
   * an OAuth resource server), or `undefined` for 401. A session answers only its own principal.
   * @default the holder of `token`; without a token, one principal for every loopback client
   */
  authenticate?: GatewayAuthenticator | undefined;
  /**
   * Act as an OAuth 2.1 resource server instead of `token`: every request carries an access token (a JWT
   * from `issuer`, for `audience`, signed with the issuer's keys, with the `call` scope); its subject is
   * the principal of the request's calls, and only a token with the `approve` scope may answer approval
   * cards. The protected resource metadata is served at `/.well-known/oauth-protected-resource/mcp`.
   * @default none
   */
  oauth?: OAuthResourceOptions | undefined;
  /**
   * Browser origins allowed besides same-origin loopback (`https://app.example.org`); each gets CORS
   * headers. A request without `Origin` (any non-browser client) is not affected. @default none
   */
  allowedOrigins?: readonly string[] | undefined;
  /**
   * Host names a request's `Host` may name besides the bound ones (a DNS name, or the name a reverse
   * proxy forwards). @default the loopback names on a loopback bind, the bound address otherwise, and
   *   every address of the machine on a wildcard bind (`0.0.0.0`, `::`)
   */
  allowedHosts?: readonly string[] | undefined;
  /** Largest request body; a larger one is refused with 413 while it is read. @default 4 MiB */
  maxBodyBytes?: number | undefined;
  /**
   * Body bytes held in memory at once while requests are read, all clients together; a body that
   * would pass it is refused with 503. A client may hold a quarter of it (at least `maxBodyBytes`).
   * @default 32 MiB
   */
  maxBufferedBodyBytes?: number | undefined;
  /** A request's body must arrive within this once its headers did; else 408. @default 30 s */
  bodyTimeoutMs?: number | undefined;
  /**
   * A request's headers must arrive within this, and a connection with no request in progress (one
   * that sends nothing, or a kept-alive one between requests) is closed after this long. @default 10 s
   */
  headersTimeoutMs?: number | undefined;
  /** Open connections at once; one more is answered 503 and closed. @default 512 */
  maxConnections?: number | undefined;
  /**
   * Open connections at once from one address (each MCP client over HTTP holds a few: its GET stream,
   * its POSTs; every loopback client shares one address). @default 256
   */
  maxConnectionsPerClient?: number | undefined;
  /**
   * A session with no request for this long (and none running) is closed and forgotten; its id then
   * gets 404. An open GET stream does not keep a session alive. @default 30 minutes
   */
  idleTimeoutMs?: number | undefined;
  /**
   * A session whose client sent nothing after `initialize` (not even its `initialized` notification) is
   * closed after this long.
   * @default 60 s (or `idleTimeoutMs` when shorter)
   */
  unusedSessionTimeoutMs?: number | undefined;
  /**
   * Most sessions open at once. When the table is full, the least recently used session with no request
   * running makes way (one left unused after `initialize` for 10 s first); only when every session
   * has a request running does `initialize` get 503. @default 100
   */
  maxSessions?: number | undefined;
  /**
   * Most sessions of one client (its principal and address) at once; its least recently used idle session
   * makes way for a new one, and when all of them are running a request `initialize` gets 429.
   * @default 64
   */
  maxSessionsPerClient?: number | undefined;
  /** The idle timers' clock. @default the system clock */
  clock?: Clock | undefined;
  /** Receives failures no client can be told about. @default stderr */
  onError?: ((error: unknown) => void) | undefined;
}

const DEFAULTS = {
  maxBodyBytes: 4 * 1024 * 1024,
  maxBufferedBodyBytes: 32 * 1024 * 1024,
  bodyTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  maxConnections: 512,
  maxConnectionsPerClient: 256,
  idleTimeoutMs: 30 * 60_000,
  unusedSessionTimeoutMs: 60_000,
  maxSessions: 100,
  maxSessionsPerClient: 64,
};

/** Options with their defaults, checked. */
export interface ResolvedGatewayHttpOptions {
  host: string;
  port: number;
  token: string | undefined;
  allowedOrigins: string[];
  allowedHosts: string[];
  maxBodyBytes: number;
  maxBufferedBodyBytes: number;
  bodyTimeoutMs: number;
  headersTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerClient: number;
  idleTimeoutMs: number;
  unusedSessionTimeoutMs: number;
  maxSessions: number;
  maxSessionsPerClient: number;
}

/**
 * Checks the options of `serveGatewayHttp` without binding anything (the CLI calls it before it starts
 * the runtime).
 * @param options the options
 * @returns them with their defaults
 * @throws GovernanceError `INVALID_CONFIG` naming the field and the fix
 */
export function resolveGatewayHttpOptions(options: GatewayHttpOptions): ResolvedGatewayHttpOptions {
  const host = options.host?.trim() || "127.0.0.1";
  const token = options.token === "" ? undefined : options.token;
  if (options.oauth !== undefined) {
    if (token !== undefined || options.authenticate !== undefined) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        "Give one of token, authenticate or oauth: the OAuth resource server replaces the token check.",
        { data: { field: "oauth" } },
      );
    }
    checkOAuthResourceOptions(options.oauth);
  }
  if (options.authenticate !== undefined && token !== undefined) {
    throw invalid(
      "authenticate",
      "Give either token or authenticate: authenticate replaces the token check.",
    );
  }
  // An app's authenticator stands for the token: the bind rule asks only that someone authenticates.
  if (options.authenticate === undefined && options.oauth === undefined) assertSafeBind(host, token);
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw invalid("port", `Port ${port} is not a port number; use 0 to 65535 (0 takes a free port).`);
  }
  const positive = (field: keyof typeof DEFAULTS) => {
    const value = options[field] ?? DEFAULTS[field];
    if (!Number.isInteger(value) || value <= 0) {
      throw invalid(field, `${field} must be a positive whole number; got ${value}.`);
    }
    return value;
  };
  const maxBodyBytes = positive("maxBodyBytes");
  const maxBufferedBodyBytes = positive("maxBufferedBodyBytes");
  if (maxBufferedBodyBytes < maxBodyBytes) {
    throw invalid(
      "maxBufferedBodyBytes",
      `maxBufferedBodyBytes (${maxBufferedBodyBytes}) must be at least maxBodyBytes (${maxBodyBytes}), or no body of the largest size could be read.`,
    );
  }
  return {
    host,
    port,
    token,
    allowedOrigins: (options.allowedOrigins ?? []).map(normalizeOrigin),
    allowedHosts: (options.allowedHosts ?? []).map((name) => name.trim()).filter(Boolean),
    maxBodyBytes,
    maxBufferedBodyBytes,
    bodyTimeoutMs: positive("bodyTimeoutMs"),
    headersTimeoutMs: positive("headersTimeoutMs"),
    maxConnections: positive("maxConnections"),
    maxConnectionsPerClient: positive("maxConnectionsPerClient"),
    idleTimeoutMs: positive("idleTimeoutMs"),
    unusedSessionTimeoutMs: positive("unusedSessionTimeoutMs"),
    maxSessions: positive("maxSessions"),
    maxSessionsPerClient: positive("maxSessionsPerClient"),
  };
}

function invalid(field: string, message: string): GovernanceError {
  return new GovernanceError("INVALID_CONFIG", message, { data: { field } });
}
