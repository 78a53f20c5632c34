/**
 * The checks every HTTP request to the gateway passes before the MCP transport sees it: the `Host`
 * header names this server (DNS rebinding), the `Origin` is absent, same-origin loopback or allowed,
 * and the request names its principal: the bearer token's holder, an app's own authenticator, or the
 * loopback client (see ARCHITECTURE.md, "The governed MCP gateway").
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { isIP, isIPv6 } from "node:net";
import { networkInterfaces } from "node:os";
import { GovernanceError } from "../core/index.js";

/** The environment variable `sciencegate serve gateway --http` reads the bearer token from. */
export const GATEWAY_TOKEN_ENV = "SCIENCEGATE_GATEWAY_TOKEN";

/** The shortest bearer token accepted: a guessable token is no protection. */
const MIN_TOKEN_LENGTH = 16;

/** A refused request: the HTTP status, the JSON-RPC error and extra headers. */
export interface HttpRefusal {
  /** The HTTP status (401, 403, ...). */
  status: number;
  /** The JSON-RPC error code of the body. */
  code: number;
  /** The JSON-RPC error message (shown to the client). */
  message: string;
  /** Headers to send, e.g. `WWW-Authenticate`. */
  headers?: Record<string, string> | undefined;
}

/**
 * Who sent a request: the party a gateway session belongs to. A session answers only requests of the
 * principal that opened it, so an id read in a ledger, a log or a page gives no one else its session.
 */
export interface GatewayPrincipal {
  /** Equal for every request of one party, different between parties; never shown to clients. */
  id: string;
  /**
   * The user the party's calls are made for (an access token's subject): every row of its calls carries
   * it, and only its grants, approval mode, cards and quotas apply (see `checkPrincipal`).
   * @default none: the single user of a deployment without identities (the shared token, loopback)
   */
  user?: string | undefined;
  /** Whether the party may answer approval cards of its calls. @default true */
  mayApprove?: boolean | undefined;
}

/**
 * Resolves the principal of a request (an app's own authentication: per-user tokens, an OAuth
 * resource server), or `undefined` to refuse it with 401, or the refusal to send (a challenge).
 */
export type GatewayAuthenticator = (
  request: IncomingMessage,
) => GatewayPrincipal | HttpRefusal | undefined | Promise<GatewayPrincipal | HttpRefusal | undefined>;

/** The principal of every request on a loopback bind without a token: whoever can reach the port. */
export const LOOPBACK_PRINCIPAL: GatewayPrincipal = { id: "loopback" };

/** The principal of every request that carries the gateway's one bearer token. */
const TOKEN_PRINCIPAL: GatewayPrincipal = { id: "bearer-token" };

/** What the guard checks against, known once the server listens. */
export interface HttpGuardSettings {
  /** The address the server is bound to. */
  host: string;
  /** The port it listens on. */
  port: number;
  token: string | undefined;
  /** Replaces the token check: the app's own authentication. */
  authenticate?: GatewayAuthenticator | undefined;
  /** Origins allowed besides same-origin loopback (`scheme://host[:port]`). */
  allowedOrigins: readonly string[];
  /** Host names allowed besides the bound ones. */
  allowedHosts: readonly string[];
  /** The machine's addresses, for a wildcard bind. @default `os.networkInterfaces()` */
  interfaceAddresses?: (() => string[]) | undefined;
}

/** The checks of one listening server. */
export interface HttpGuard {
  /**
   * Checks `Host`, then `Origin`.
   * @returns the refusal, or `undefined` when the request may go on
   */
  check(request: IncomingMessage): HttpRefusal | undefined;
  /**
   * Who sent the request: the bearer token's holder, the app's `authenticate`, or the loopback client.
   * @returns the principal, or the 401 refusal
   */
  authenticate(request: IncomingMessage): Promise<HttpRefusal | { principal: GatewayPrincipal }>;
  /** The CORS headers for a request from an allowed cross origin (none for others). */
  corsHeaders(request: IncomingMessage): Record<string, string>;
}

/**
 * Whether a bind address is loopback only (`127.0.0.0/8`, `::1`, `localhost`).
 * @param host the address or name
 */
export function isLoopbackHost(host: string): boolean {
  const bare = unbracket(host).toLowerCase();
  if (bare === "localhost") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  return bare === "::1" || bare.startsWith("::ffff:127.");
}

/** Who the bind rule speaks for: the server's name, its token's variable and how a client sends it. */
export interface BindRuleLabels {
  name: string;
  env: string;
  /** The end of the fix sentence, e.g. `so that every request must carry "Authorization: Bearer <token>"`. */
  use: string;
}

const GATEWAY_BIND_LABELS: BindRuleLabels = {
  name: "gateway",
  env: GATEWAY_TOKEN_ENV,
  use: 'so that every request must carry "Authorization: Bearer <token>"',
};

/**
 * Refuses a bind that would serve the network without a token, or with a token too short to protect.
 * @param host the bind address
 * @param token the bearer token, if any
 * @param labels whose rule it is (the gateway's by default)
 * @throws GovernanceError `INVALID_CONFIG` naming the token's variable and the fix
 */
export function assertSafeBind(
  host: string,
  token: string | undefined,
  labels: BindRuleLabels = GATEWAY_BIND_LABELS,
): void {
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `The ${labels.name}'s bearer token (${labels.env}) has ${token.length} characters; use at least ${MIN_TOKEN_LENGTH}, e.g. the output of \`openssl rand -hex 32\`.`,
      { data: { field: "token" } },
    );
  }
  if (token === undefined && !isLoopbackHost(host)) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `The ${labels.name} would listen on ${host}, which is reachable from other machines, without a bearer token. Set ${labels.env} (e.g. to the output of \`openssl rand -hex 32\`) ${labels.use}, or bind 127.0.0.1.`,
      { data: { field: "token", host, env: labels.env } },
    );
  }
}

/**
 * An origin as browsers send it (`scheme://host[:port]`, default port dropped).
 * @throws GovernanceError `INVALID_CONFIG` for something that is not an http(s) origin
 */
export function normalizeOrigin(origin: string): string {
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `Allowed origin '${origin}' is not an http(s) origin; write it as the browser sends it, e.g. http://localhost:6274.`,
      { data: { field: "allowedOrigins", origin } },
    );
  }
  return url.origin;
}

/**
 * The guard of a listening server.
 * @param settings bound address and port, token, allow-lists
 */
export function createHttpGuard(settings: HttpGuardSettings): HttpGuard {
  const hostAllowed = createHostCheck(settings);
  const sameOrigins = new Set(
    isLoopbackHost(settings.host)
      ? ["localhost", "127.0.0.1", "[::1]", bracket(settings.host)].map(
          (name) => new URL(`http://${name}:${settings.port}`).origin,
        )
      : [],
  );
  const crossOrigins = new Set(settings.allowedOrigins.map(normalizeOrigin));

  const originOf = (request: IncomingMessage) => {
    const origin = request.headers.origin;
    if (origin === undefined) return undefined;
    try {
      return new URL(origin).origin;
    } catch {
      return origin;
    }
  };

  const authenticate = settings.authenticate ?? tokenAuthenticator(settings.token);
  return {
    check(request) {
      if (!hostAllowed(request.headers.host)) {
        return forbidden(`Invalid Host header: ${request.headers.host ?? "(none)"}`);
      }
      const origin = originOf(request);
      if (origin !== undefined && !sameOrigins.has(origin) && !crossOrigins.has(origin)) {
        return forbidden(`Invalid Origin header: ${request.headers.origin}`);
      }
      return undefined;
    },
    async authenticate(request) {
      const principal = await authenticate(request);
      if (isRefusal(principal)) return principal;
      if (principal === undefined || principal.id === "") return unauthorized(undefined);
      return { principal };
    },
    corsHeaders(request) {
      const origin = originOf(request);
      if (origin === undefined || !crossOrigins.has(origin)) return {};
      return {
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Expose-Headers": "Mcp-Session-Id, WWW-Authenticate",
        Vary: "Origin",
      };
    },
  };
}

/**
 * The `Host` check alone (DNS rebinding): whether a request's `Host` header names the bound server
 * (the loopback names, the bound address, the machine's addresses on a wildcard bind) or an allowed name.
 * @param settings the bound address and port and the allowed host names
 * @returns a predicate over the raw `Host` header
 */
export function createHostCheck(
  settings: Pick<HttpGuardSettings, "host" | "allowedHosts" | "interfaceAddresses">,
): (hostHeader: string | undefined) => boolean {
  const hostNames = boundHostNames(settings);
  for (const name of settings.allowedHosts) hostNames.add(hostNameOf(bracket(name)) ?? name.toLowerCase());
  // A client sends the same Host on every request: the last header's answer is kept (one entry, so a
  // client varying it costs a URL parse per request as before, and nothing grows).
  let last: { header: string | undefined; allowed: boolean } | undefined;
  return (header) => {
    if (last !== undefined && last.header === header) return last.allowed;
    const host = hostNameOf(header ?? "");
    const allowed = host !== undefined && hostNames.has(host);
    last = { header, allowed };
    return allowed;
  };
}

/**
 * The default authentication: with a token, its holder (one principal) and a 401 for anything else;
 * without one, every request is the loopback client's (the bind rule allows that on loopback only).
 */
function tokenAuthenticator(
  token: string | undefined,
): (request: IncomingMessage) => GatewayPrincipal | HttpRefusal {
  if (token === undefined) return () => LOOPBACK_PRINCIPAL;
  const expected = digest(token);
  return (request) => {
    const given = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? "")?.[1];
    // Equal-length digests: the comparison takes the same time whatever the token.
    const matches = timingSafeEqual(digest(given ?? ""), expected) && given !== undefined;
    return matches ? TOKEN_PRINCIPAL : unauthorized(given);
  };
}

function unauthorized(given: string | undefined): HttpRefusal {
  return {
    status: 401,
    code: -32000,
    message: given
      ? "Unauthorized: the bearer token is not valid"
      : "Unauthorized: send Authorization: Bearer <token>",
    headers: {
      "WWW-Authenticate": given
        ? 'Bearer realm="sciencegate-gateway", error="invalid_token"'
        : 'Bearer realm="sciencegate-gateway"',
    },
  };
}

function isRefusal(value: GatewayPrincipal | HttpRefusal | undefined): value is HttpRefusal {
  return value !== undefined && "status" in value;
}

function forbidden(message: string): HttpRefusal {
  return { status: 403, code: -32000, message };
}

/** The host names a request may name: loopback names on a loopback bind, the machine's on a wildcard. */
function boundHostNames(settings: Pick<HttpGuardSettings, "host" | "interfaceAddresses">): Set<string> {
  const bound = unbracket(settings.host).toLowerCase();
  const names = new Set<string>();
  const add = (name: string) => names.add(hostNameOf(bracket(name)) ?? name);
  if (bound === "0.0.0.0" || bound === "::") {
    for (const name of ["localhost", "127.0.0.1", "::1"]) add(name);
    for (const address of (settings.interfaceAddresses ?? interfaceAddresses)()) add(address);
  } else if (isLoopbackHost(bound)) {
    for (const name of ["localhost", "127.0.0.1", "::1", bound]) add(name);
  } else {
    add(bound);
  }
  return names;
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((entry) => entry.address));
}

/** The lowercase host name of a `Host` header (`[::1]` bracketed, port dropped), or `undefined`. */
function hostNameOf(header: string): string | undefined {
  if (header === "") return undefined;
  try {
    const url = new URL(`http://${header}`);
    return url.username || url.password || url.pathname !== "/" ? undefined : url.hostname;
  } catch {
    return undefined;
  }
}

function bracket(host: string): string {
  return isIPv6(host) ? `[${host}]` : host;
}

function unbracket(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
