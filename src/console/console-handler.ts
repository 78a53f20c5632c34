/**
 * `createConsoleHandler`: the console as one Node request listener an app mounts in its own server (or
 * `serveConsole` serves alone). It checks the access token, serves the console's two asset files,
 * routes to the pages, reads a POST's form under a cap and checks its CSRF token and origin, refuses
 * writes on a read-only console, and renders what the page returns (see ARCHITECTURE.md, "The console").
 */
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type Clock,
  GovernanceError,
  isGovernanceError,
  requireGovernanceOption,
  systemClock,
} from "../core/index.js";
import { createOAuthResourceServer, isIdentityRefusal, type OAuthResourceOptions } from "../gateway/index.js";
import type { Governance } from "../runtime/index.js";
import {
  type AuthorizationOutcome,
  ConsoleAuthorizations,
  OAUTH_CALLBACK_PATH,
} from "./console-authorizations.js";
import { html } from "./console-html.js";
import { renderLayout } from "./console-layout.js";
import type { ConsoleContext, ConsoleRequest, ConsoleResult } from "./console-route.js";
import { consoleRoutes } from "./console-routes.js";
import { ConsoleSecurity, setSecurityHeaders } from "./console-security.js";

/** Options of `createConsoleHandler`. */
export interface ConsoleHandlerOptions {
  /** The runtime (`createGovernance`). */
  governance: Governance;
  /** The path the console is mounted at (`/sciencegate`); requests outside it go to `next` or get 404. @default "" */
  basePath?: string;
  /**
   * The access token: every request must carry it as `Authorization: Bearer <token>` or the cookie a
   * `?token=<token>` visit sets. Without it every request is let in (bind loopback, or mount behind the
   * app's own authentication).
   */
  token?: string;
  /**
   * Act as an OAuth 2.1 resource server instead of `token`: every request carries an access token (a JWT
   * from `issuer`, for `audience`, the console's public URL, with the `administer` scope), whose subject
   * is recorded on the rows of the changes it makes. Browsers reach it through an authenticating proxy
   * that forwards the access token. The protected resource metadata is served at
   * `/.well-known/oauth-protected-resource<basePath>`. @default none
   */
  oauth?: OAuthResourceOptions | undefined;
  /**
   * The console's address as browsers reach it, base path included (`https://ops.example/sciencegate`):
   * the Sources page's "Authorize" sends authorization servers back to `<publicUrl>/oauth/callback`.
   * Set it behind a proxy that changes the scheme or host. @default the request's scheme and `Host`
   */
  publicUrl?: string | undefined;
  /**
   * Where a protected server's `clientSecretEnv` and `privateKeyEnv` are read when the console authorizes
   * it. @default process.env
   */
  env?: Record<string, string | undefined> | undefined;
  /** Allow write actions (revoke grants, approval modes, source switches, cancel and retry jobs, authorize servers). @default false */
  writable?: boolean;
  /** A secret the console's replicas share, so a form served by one is accepted by another. @default random */
  csrfSecret?: string;
  /** The largest POST body read, in bytes. @default 1 MiB */
  maxBodyBytes?: number;
  clock?: Clock;
  /**
   * Reads a thread's final answer, so the Evidence page can review it (`/evidence?thread=<id>`);
   * `checkpointerThreadAnswer(checkpointer)` reads it from a LangGraph checkpointer. @default none
   */
  threadAnswer?: ((threadId: string) => Promise<string | undefined>) | undefined;
}

/** The console as a Node request listener; `next` (Express style) gets requests outside `basePath`. */
export interface ConsoleHandler {
  (request: IncomingMessage, response: ServerResponse, next?: () => void): void;
  /** Ends the open event streams. Idempotent. */
  close(): void;
}

const ASSETS: Record<string, { file: string; type: string }> = {
  "/assets/console.css": { file: "./assets/console.css", type: "text/css; charset=utf-8" },
  "/assets/console.js": { file: "./assets/console.js", type: "text/javascript; charset=utf-8" },
  "/assets/favicon.svg": { file: "./assets/favicon.svg", type: "image/svg+xml" },
};

const STATUS_OF: Record<string, number> = {
  UNKNOWN_ID: 404,
  NOT_FOUND: 404,
  INVALID_INPUT: 400,
  PERMISSION_DENIED: 403,
};

/**
 * The console over an open runtime: the same ledger, content store, grants, session state and jobs
 * the app uses.
 * @param options `governance` (the runtime (`createGovernance`)), base path, access token, writes, CSRF secret, body cap, clock
 * @returns the request listener
 * @example
 * const consoleHandler = createConsoleHandler({ governance, basePath: "/sciencegate" });
 * http.createServer((req, res) => consoleHandler(req, res, () => app(req, res))).listen(3000);
 */
export function createConsoleHandler(options: ConsoleHandlerOptions): ConsoleHandler {
  requireGovernanceOption(options, "createConsoleHandler");
  const { governance } = options;
  const basePath = normalizeBasePath(options.basePath ?? "");
  if (options.oauth !== undefined && options.token !== undefined) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      "Give either token or oauth: the OAuth resource server replaces the console's token.",
      { data: { field: "oauth" } },
    );
  }
  const oauth = options.oauth && createOAuthResourceServer(options.oauth);
  const security = new ConsoleSecurity(options.token, options.csrfSecret, options.clock ?? systemClock);
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const closing = new AbortController();
  const assets = new Map(
    Object.entries(ASSETS).map(([path, { file, type }]) => [
      path,
      { type, body: readFileSync(new URL(file, import.meta.url)) },
    ]),
  );
  const routes = consoleRoutes().map((route) => ({ route, match: compile(route.pattern) }));
  const href: ConsoleContext["href"] = (path, query) => {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== "") search.set(key, String(value));
    }
    const qs = search.toString();
    return `${basePath}${path}${qs ? `?${qs}` : ""}`;
  };
  const context: ConsoleContext = {
    governance,
    writable: options.writable === true,
    csrfToken: security.csrfToken,
    clock: options.clock ?? systemClock,
    href,
    signal: closing.signal,
    threadAnswer: options.threadAnswer,
    authorizations: new ConsoleAuthorizations(governance, options.clock ?? systemClock, options.env),
  };
  const publicUrl = options.publicUrl === undefined ? undefined : checkedPublicUrl(options.publicUrl);

  const serve = async (request: IncomingMessage, response: ServerResponse, path: string, url: URL) => {
    setSecurityHeaders(response);
    const method = request.method === "HEAD" ? "GET" : request.method;
    if (path === OAUTH_CALLBACK_PATH && method === "GET") {
      // Let in by its single-use state alone (see console-authorizations.ts): the browser comes from the
      // authorization server and carries neither the console's cookie nor a bearer token.
      const outcome = await context.authorizations.finish(url.searchParams);
      return sendPage(
        response,
        outcome.status === "authorized" ? 200 : 400,
        "Authorization",
        callbackPage(outcome, context.href("/sources", { refresh: "1" })),
      );
    }
    let principal: string | undefined;
    if (oauth !== undefined) {
      const identity = await oauth.authenticate(request.headers.authorization, "administer");
      if (isIdentityRefusal(identity)) {
        response.setHeader("WWW-Authenticate", identity.challenge);
        return sendText(response, identity.status, `Refused: ${identity.description}.`);
      }
      principal = identity.principal;
    }
    const given = url.searchParams.get("token");
    if (given !== null && method === "GET" && security.tokenMatches(given)) {
      url.searchParams.delete("token");
      response.setHeader("Set-Cookie", security.sessionCookie(basePath));
      return redirect(response, `${basePath}${path}${url.search}`);
    }
    if (!security.authenticated(request)) {
      response.setHeader("WWW-Authenticate", 'Bearer realm="sciencegate-console"');
      return sendText(
        response,
        401,
        "Unauthorized: open the console with ?token=<token> once, or send Authorization: Bearer <token>.",
      );
    }
    const asset = method === "GET" ? assets.get(path) : undefined;
    if (asset) {
      response.setHeader("Cache-Control", "no-cache");
      return send(response, 200, asset.type, asset.body);
    }
    if (path === "/" || path === "") return redirect(response, href("/sources"));
    // Each route's pattern is matched once: the routes of this path, with their parameters.
    const matching = routes.flatMap(({ route, match }) => {
      const params = match(path);
      return params === undefined ? [] : [{ route, params }];
    });
    const hit = matching.find(({ route }) => route.method === method);
    if (!hit) {
      if (matching.length > 0) {
        response.setHeader("Allow", [...new Set(matching.map(({ route }) => route.method))].join(", "));
        return sendPage(
          response,
          405,
          "Method not allowed",
          html`<p>This page answers ${matching.map(({ route }) => route.method).join(" or ")}.</p>`,
        );
      }
      return sendPage(
        response,
        404,
        "Not found",
        html`<p>No console page at <code>${decodedPath(path)}</code>.</p>`,
      );
    }
    let form = new URLSearchParams();
    if (method === "POST") {
      const type = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
      if (type !== "application/x-www-form-urlencoded") {
        return sendText(response, 415, "Send the form as application/x-www-form-urlencoded.");
      }
      const body = await readBody(request, maxBodyBytes);
      if (body === undefined) {
        response.setHeader("Connection", "close");
        return sendText(response, 413, `The form is larger than ${maxBodyBytes} bytes.`);
      }
      form = new URLSearchParams(body);
      const refused = security.checkWrite(request, form.get("_csrf") ?? undefined);
      if (refused !== undefined)
        return sendPage(response, 403, "Refused", html`<p class="error-box">${refused}</p>`);
      if (hit.route.writes && !context.writable) {
        return sendPage(
          response,
          403,
          "Read-only console",
          html`<p class="error-box">This console is read-only. Start it with <code>sciencegate console --writable</code> (or <code>writable: true</code>) to change grants, modes, switches and jobs.</p>`,
        );
      }
    }
    const consoleRequest: ConsoleRequest = {
      method: method as "GET" | "POST",
      url,
      params: hit.params,
      form,
      client: request.socket.remoteAddress ?? "unknown",
      consoleUrl: publicUrl ?? requestOrigin(request, basePath),
      principal,
    };
    let result: ConsoleResult;
    try {
      result = await hit.route.handle(consoleRequest, context);
    } catch (error) {
      if (!isGovernanceError(error)) throw error;
      const status = STATUS_OF[error.code] ?? 500;
      return sendPage(
        response,
        status,
        status === 404 ? "Not found" : "Error",
        html`<p class="error-box"><code>${error.code}</code> ${error.message}</p>`,
      );
    }
    switch (result.kind) {
      case "page":
        return sendPage(response, result.status ?? 200, result.title, result.body, result.section);
      case "redirect":
        return redirect(response, result.external ? result.location : `${basePath}${result.location}`);
      case "file":
        for (const [name, value] of Object.entries(result.headers ?? {})) response.setHeader(name, value);
        return send(response, result.status ?? 200, result.contentType, result.body);
      case "stream":
        return result.run(response);
    }
  };

  const sendPage = (
    response: ServerResponse,
    status: number,
    title: string,
    body: ReturnType<typeof html>,
    section: Parameters<typeof renderLayout>[1]["section"] = "sources",
  ) =>
    send(
      response,
      status,
      "text/html; charset=utf-8",
      renderLayout(context, { title, section, body }).markup,
    );

  const handler = ((request: IncomingMessage, response: ServerResponse, next?: () => void) => {
    let url: URL;
    try {
      url = new URL(request.url ?? "/", "http://console.invalid");
    } catch {
      return sendText(response, 400, "Malformed request URL.");
    }
    if (oauth !== undefined && url.pathname === oauth.metadataPath && request.method === "GET") {
      setSecurityHeaders(response);
      return send(response, 200, "application/json", JSON.stringify(oauth.metadata()));
    }
    const inside = basePath === "" || url.pathname === basePath || url.pathname.startsWith(`${basePath}/`);
    if (!inside) {
      if (next) return next();
      return sendText(response, 404, "Not found.");
    }
    const path = url.pathname.slice(basePath.length) || "/";
    serve(request, response, path, url).catch((error: unknown) => {
      if (response.headersSent) {
        response.destroy();
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      sendText(response, 500, `The console failed: ${message}`);
    });
  }) as ConsoleHandler;
  handler.close = () => closing.abort();
  return handler;
}

function checkedPublicUrl(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (
    url === undefined ||
    (url.protocol !== "http:" && url.protocol !== "https:") ||
    url.search ||
    url.hash
  ) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `The console's publicUrl '${value}' must be an http(s) URL such as https://ops.example/sciencegate.`,
      { data: { field: "publicUrl" } },
    );
  }
  return url.href.replace(/\/+$/, "");
}

/** The console's address as this request reached it: scheme, `Host` and base path. */
function requestOrigin(request: IncomingMessage, basePath: string): string {
  const encrypted = (request.socket as { encrypted?: boolean }).encrypted === true;
  const host =
    request.headers.host ?? `${request.socket.localAddress ?? "localhost"}:${request.socket.localPort ?? ""}`;
  return `${encrypted ? "https" : "http"}://${host}${basePath}`;
}

function callbackPage(outcome: AuthorizationOutcome, sources: string): ReturnType<typeof html> {
  if (outcome.status === "authorized") {
    // A plain link back: this page was reached from another site, so the console's SameSite=Strict
    // cookie comes along only on a navigation that starts here.
    return html`<p class="notice" role="status">Authorized: the tokens of MCP server <code>${outcome.serverId}</code> are stored.</p>
<p><a href="${sources}#source-${outcome.sourceId}">Back to Sources</a> (lists every server again).</p>`;
  }
  return html`<p class="error-box">The authorization${outcome.serverId === undefined ? "" : html` of MCP server <code>${outcome.serverId}</code>`} did not finish: ${outcome.message}</p>
<p><a href="${sources}">Back to Sources</a></p>`;
}

function normalizeBasePath(path: string): string {
  if (path === "" || path === "/") return "";
  if (!path.startsWith("/") || /[?#\s]/.test(path)) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `The console's basePath '${path}' must be a path such as /sciencegate.`,
      {
        data: { field: "basePath" },
      },
    );
  }
  return path.replace(/\/+$/, "");
}

function compile(pattern: string): (path: string) => Record<string, string> | undefined {
  const parts = pattern.split("/");
  return (path) => {
    const segments = path.split("/");
    if (segments.length !== parts.length) return undefined;
    const params: Record<string, string> = {};
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as string;
      const segment = segments[i] as string;
      if (part.startsWith(":")) {
        if (segment === "") return undefined;
        try {
          params[part.slice(1)] = decodeURIComponent(segment);
        } catch {
          return undefined;
        }
      } else if (part !== segment) {
        return undefined;
      }
    }
    return params;
  };
}

function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

function readBody(request: IncomingMessage, cap: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers["content-length"] ?? "0");
    if (declared > cap) {
      request.resume();
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > cap) {
        request.removeAllListeners("data");
        request.resume();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

function redirect(response: ServerResponse, location: string): void {
  response.statusCode = 303;
  response.setHeader("Location", location);
  response.end();
}

function send(response: ServerResponse, status: number, type: string, body: string | Uint8Array): void {
  response.statusCode = status;
  response.setHeader("Content-Type", type);
  response.end(body);
}

function sendText(response: ServerResponse, status: number, text: string): void {
  setSecurityHeaders(response);
  send(response, status, "text/plain; charset=utf-8", `${text}\n`);
}
