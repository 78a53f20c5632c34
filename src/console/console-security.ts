/**
 * Who may use the console and how a write proves it came from the console's own page: the access
 * token (a bearer header, or a cookie set from a `?token=` link), the CSRF token of every form, the
 * `Origin` of a POST, and the headers every answer carries (see ARCHITECTURE.md, "The console").
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type Clock, systemClock } from "../core/index.js";
import { assertSafeBind } from "../gateway/index.js";

/** The environment variable `sciencegate console` reads its access token from. */
export const CONSOLE_TOKEN_ENV = "SCIENCEGATE_CONSOLE_TOKEN";

/** The cookie that carries the access token's digest after a `?token=` visit. */
export const CONSOLE_COOKIE = "sciencegate_console";

/** How long the cookie of a `?token=` visit lets a browser in; then the link is needed again. */
export const CONSOLE_COOKIE_MAX_AGE_MS = 12 * 60 * 60_000;

/**
 * The content security policy of every answer: scripts and styles only from the console's own files,
 * no inline script, no frames, forms posting only to the console.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * Refuses a bind reachable from other machines without a token, or a token too short to protect.
 * @param host the bind address
 * @param token the access token, if any
 * @throws GovernanceError `INVALID_CONFIG` naming `SCIENCEGATE_CONSOLE_TOKEN` and the fix
 */
export function assertConsoleBind(host: string, token: string | undefined): void {
  assertSafeBind(host, token, {
    name: "console",
    env: CONSOLE_TOKEN_ENV,
    use: "and open the console once with ?token=<token>",
  });
}

/** The access and CSRF checks of one console. */
export class ConsoleSecurity {
  readonly #tokenDigest: Buffer | undefined;
  readonly #csrfKey: Buffer;
  readonly #clock: Clock;
  /** The token every form carries (`_csrf`) and every write must send back. */
  readonly csrfToken: string;

  /**
   * @param token the access token; without it every request is let in (a loopback console)
   * @param csrfSecret a secret shared by the replicas of one console; @default random per process
   * @param clock dates the cookie and checks its age; @default the system clock
   */
  constructor(token: string | undefined, csrfSecret?: string, clock: Clock = systemClock) {
    this.#clock = clock;
    this.#tokenDigest = token === undefined ? undefined : digest(token);
    this.#csrfKey = csrfSecret === undefined ? randomBytes(32) : digest(csrfSecret);
    this.csrfToken = createHmac("sha256", this.#csrfKey).update("sciencegate-console-csrf").digest("hex");
  }

  /** Whether the console asks for a token at all. */
  get requiresToken(): boolean {
    return this.#tokenDigest !== undefined;
  }

  /**
   * Whether a request carries the access token (`Authorization: Bearer`, or the console's cookie
   * while it has not expired).
   * @param request the request
   */
  authenticated(request: IncomingMessage): boolean {
    if (this.#tokenDigest === undefined) return true;
    const bearer = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? "")?.[1];
    if (bearer !== undefined && equalDigests(digest(bearer), this.#tokenDigest)) return true;
    const cookie = cookieValue(request.headers.cookie, CONSOLE_COOKIE);
    const expires = Number(/^(\d{1,15})\./.exec(cookie ?? "")?.[1]);
    // The expiry is inside the HMAC: a browser cannot extend it, and an old cookie stays out.
    if (!Number.isSafeInteger(expires) || expires <= this.#clock.now()) return false;
    return equalDigests(digest(cookie ?? ""), digest(this.#cookieValue(expires)));
  }

  /**
   * Whether `?token=` names the access token; then the answer sets the cookie.
   * @param given the query's token
   */
  tokenMatches(given: string): boolean {
    return this.#tokenDigest !== undefined && equalDigests(digest(given), this.#tokenDigest);
  }

  /**
   * The `Set-Cookie` header that lets a browser in after a `?token=` visit (`HttpOnly`, `SameSite=Strict`)
   * for `CONSOLE_COOKIE_MAX_AGE_MS`.
   * @param path the console's base path
   */
  sessionCookie(path: string): string {
    const expires = this.#clock.now() + CONSOLE_COOKIE_MAX_AGE_MS;
    const maxAge = Math.floor(CONSOLE_COOKIE_MAX_AGE_MS / 1000);
    return `${CONSOLE_COOKIE}=${this.#cookieValue(expires)}; Path=${path || "/"}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict`;
  }

  /**
   * Whether a write came from the console's own page: the CSRF token matches, and the `Origin` (or,
   * when absent or `null`, `Sec-Fetch-Site`) is the console's own.
   * @param request the POST
   * @param sent the `_csrf` field of its form (or the `X-CSRF-Token` header)
   * @returns the reason it is refused, or `undefined`
   */
  checkWrite(request: IncomingMessage, sent: string | undefined): string | undefined {
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== "null") {
      let host: string | undefined;
      try {
        host = new URL(origin).host;
      } catch {
        host = undefined;
      }
      if (host === undefined || host !== request.headers.host) return `Cross-origin request from ${origin}.`;
    } else if (origin === "null") {
      // Under `Referrer-Policy: no-referrer` a browser sends `Origin: null` even for the console's own
      // forms; its `Sec-Fetch-Site` (which no page can set) still tells them from an opaque origin's.
      if (request.headers["sec-fetch-site"] !== "same-origin") return "Request from an opaque origin.";
    } else {
      const site = request.headers["sec-fetch-site"];
      if (site !== undefined && site !== "same-origin" && site !== "none")
        return `Cross-site request (${site}).`;
    }
    const token = sent ?? headerValue(request.headers["x-csrf-token"]);
    if (token === undefined || token === "")
      return "The form has no CSRF token; reload the page and try again.";
    if (!equalDigests(digest(token), digest(this.csrfToken))) {
      return "The form's CSRF token is not valid (the console restarted?); reload the page and try again.";
    }
    return undefined;
  }

  /** `<expires>.<HMAC>`: the cookie holds a digest of the token and its expiry, not the token. */
  #cookieValue(expires: number): string {
    const mac = createHmac("sha256", this.#tokenDigest ?? Buffer.alloc(0))
      .update(`sciencegate-console-cookie:${expires}`)
      .digest("hex");
    return `${expires}.${mac}`;
  }
}

/**
 * The headers every console answer carries: the CSP, no sniffing, no framing, no referrer, no caching.
 * @param response the answer
 */
export function setSecurityHeaders(response: ServerResponse): void {
  response.setHeader("Content-Security-Policy", CONSOLE_CSP);
  response.setHeader("X-Content-Type-Options", "nosniff");
  response.setHeader("X-Frame-Options", "DENY");
  response.setHeader("Referrer-Policy", "no-referrer");
  response.setHeader("Cross-Origin-Opener-Policy", "same-origin");
  response.setHeader("Cross-Origin-Resource-Policy", "same-origin");
  response.setHeader("Cache-Control", "no-store");
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

function equalDigests(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
