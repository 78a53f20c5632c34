/**
 * A loopback HTTP server that plays the science providers for tests and the offline demo: it serves
 * fixture files by method, path and query, logs every request, and injects faults (429 with
 * `Retry-After`, 5xx, slow answers, malformed or oversized bodies, redirects).
 */
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Clock, systemClock } from "../core/index.js";
import { endpointEnvVars } from "../servers/sources/provider-env.js";
import type { SourceModule } from "../servers/sources/source-module.js";
import { SOURCE_MODULES } from "../servers/sources/source-modules.js";

/** A request as a route handler sees it. */
export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Readonly<Record<string, string>>;
  body: string;
}

/** A request in the server's log. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: string;
}

/** What a route or handler answers. */
export interface FakeResponse {
  /** @default 200 */
  status?: number;
  headers?: Record<string, string>;
  /** The body; or `file` to serve a fixture file. */
  body?: string;
  /** Absolute path of a fixture file; its extension sets the default content type. */
  file?: string;
}

/** Which requests a route or fault applies to. */
export interface FakeRequestMatch {
  /** @default "GET" for routes, any for faults */
  method?: string;
  /** Exact path (`/pubmed/eutils/esearch.fcgi`) or a pattern. */
  path?: string | RegExp;
  /** Query parameters that must be present with these values, or a predicate over the query. */
  query?: Readonly<Record<string, string>> | ((query: URLSearchParams) => boolean);
}

/** A route: a match plus a fixed answer or a handler. Routes are tried in order; the first match wins. */
export interface FakeRoute extends FakeRequestMatch, FakeResponse {
  path: string | RegExp;
  /** Answers the request itself, instead of the route's fixed response. */
  handler?: (request: FakeRequest) => FakeResponse | Promise<FakeResponse>;
}

/** An injected failure; applied `times` times (default 1, `Infinity` for always), before routing. */
export type FakeFault = (
  | { status: number; retryAfter?: string; body?: string; headers?: Record<string, string> }
  | { redirectTo: string; status?: 301 | 302 | 303 | 307 | 308 }
  | { delayMs: number }
  | { malformed: true }
  | { oversizedBytes: number }
) & { times?: number };

/** A running fake provider server. */
export interface FakeProviderServer {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /**
   * Injects a fault for matching requests.
   * @param match which requests (a match object or a predicate)
   * @param fault what to do instead of (or, for `delayMs`, before) the route's answer
   */
  setFault(match: FakeRequestMatch | ((request: FakeRequest) => boolean), fault: FakeFault): void;
  /** Removes every pending fault. */
  clearFaults(): void;
  /** Stops the server and drops open connections. */
  close(): Promise<void>;
}

/** Options of `startFakeProviderServer`. */
export interface FakeProviderServerOptions {
  routes: readonly FakeRoute[];
  /** Times `delayMs` faults. @default systemClock */
  clock?: Clock;
}

const CONTENT_TYPES: Record<string, string> = {
  json: "application/json; charset=utf-8",
  xml: "text/xml; charset=utf-8",
  atom: "application/atom+xml; charset=utf-8",
};

/**
 * Starts a fake provider server on 127.0.0.1 with an ephemeral port.
 * @param options routes and clock
 * @returns the running server
 */
export async function startFakeProviderServer(
  options: FakeProviderServerOptions,
): Promise<FakeProviderServer> {
  const clock = options.clock ?? systemClock;
  const requests: RecordedRequest[] = [];
  let faults: { matches: (r: FakeRequest) => boolean; fault: FakeFault; left: number }[] = [];
  const closing = new AbortController();

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(`fake provider error: ${error instanceof Error ? error.message : String(error)}`);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([name, value]) => [
        name,
        Array.isArray(value) ? value.join(", ") : (value ?? ""),
      ]),
    );
    const request: FakeRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers,
      body: Buffer.concat(chunks).toString("utf8"),
    };
    const { method, path, body } = request;
    requests.push({ method, path, query: Object.fromEntries(url.searchParams), headers, body });
    const route = options.routes.find((r) => matches({ method: r.method ?? "GET", ...r }, request));
    const slot = faults.find((f) => f.matches(request));
    if (slot) {
      slot.left--;
      if (slot.left <= 0) faults = faults.filter((f) => f !== slot);
      const { fault } = slot;
      if ("delayMs" in fault) {
        const gone = AbortSignal.any([closing.signal, abortOnClose(res)]);
        const delivered = await clock.sleep(fault.delayMs, gone).then(
          () => true,
          () => false,
        );
        if (!delivered) return;
      } else {
        await sendFault(res, fault, route ? await answer(route, request) : undefined);
        return;
      }
    }
    if (!route) {
      res.writeHead(501, { "content-type": "text/plain" });
      res.end(`fake provider: no route for ${request.method} ${request.path}`);
      return;
    }
    const response = await answer(route, request);
    res.writeHead(response.status, response.headers);
    res.end(response.body);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setFault(match, fault) {
      const predicate = typeof match === "function" ? match : (r: FakeRequest) => matches(match, r);
      faults.push({ matches: predicate, fault, left: fault.times ?? 1 });
    },
    clearFaults() {
      faults = [];
    },
    close() {
      closing.abort();
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}

/**
 * The base-URL environment of every source (`SCIENCEGATE_<SOURCE>[_<ENDPOINT>]_BASE_URL`), pointing at a fake
 * provider server: endpoint `<key>` of source `<id>` is served under `/<id>/<key>`.
 * @param url the fake server's URL
 * @param modules the sources @default SOURCE_MODULES
 * @returns environment variables to pass as `createSourcesServer({ env })`
 */
export function providerEnvFor(
  url: string,
  modules: readonly SourceModule[] = SOURCE_MODULES,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of modules) {
    for (const { endpoint, envVar } of endpointEnvVars(source))
      env[envVar] = `${url}${providerPath(source.id, endpoint.key)}`;
  }
  return env;
}

/**
 * The path under which the fake server serves a source endpoint, as `providerEnvFor` maps it.
 * @param sourceId the source id
 * @param endpointKey the endpoint key
 * @param path the provider path below the endpoint's base URL (`/esearch.fcgi`) @default ""
 * @returns e.g. `/pubmed/eutils/esearch.fcgi`
 */
export function providerPath(sourceId: string, endpointKey: string, path = ""): string {
  return `/${sourceId}/${endpointKey}${path}`;
}

function matches(match: FakeRequestMatch, request: FakeRequest): boolean {
  if (match.method !== undefined && match.method.toUpperCase() !== request.method) return false;
  if (typeof match.path === "string" && match.path !== request.path) return false;
  if (match.path instanceof RegExp && !match.path.test(request.path)) return false;
  if (typeof match.query === "function") return match.query(request.query);
  return Object.entries(match.query ?? {}).every(([name, value]) => request.query.get(name) === value);
}

async function answer(
  route: FakeRoute,
  request: FakeRequest,
): Promise<{ status: number; headers: Record<string, string>; body: string | Buffer }> {
  const response: FakeResponse = route.handler ? await route.handler(request) : route;
  const headers = { ...(response.headers ?? {}) };
  let body: string | Buffer = response.body ?? "";
  if (response.file) {
    body = await readFile(response.file);
    const type = CONTENT_TYPES[response.file.slice(response.file.lastIndexOf(".") + 1)];
    if (type && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type"))
      headers["content-type"] = type;
  }
  return { status: response.status ?? 200, headers, body };
}

async function sendFault(
  res: ServerResponse,
  fault: Exclude<FakeFault, { delayMs: number }>,
  routed: { headers: Record<string, string> } | undefined,
): Promise<void> {
  const contentType = routed?.headers["content-type"] ?? "text/plain";
  if ("redirectTo" in fault) {
    res.writeHead(fault.status ?? 302, { location: fault.redirectTo });
    res.end();
  } else if ("malformed" in fault) {
    res.writeHead(200, { "content-type": contentType });
    res.end('<<truncated {"answer": [');
  } else if ("oversizedBytes" in fault) {
    // Chunked, without content-length, so the client's streaming cap is what stops it.
    res.writeHead(200, { "content-type": contentType });
    const chunk = Buffer.alloc(64 * 1024, "x");
    for (let sent = 0; sent < fault.oversizedBytes && !res.destroyed; sent += chunk.length) {
      if (!res.write(chunk.subarray(0, Math.min(chunk.length, fault.oversizedBytes - sent)))) {
        await new Promise<void>((resolve) => {
          res.once("drain", resolve);
          res.once("close", resolve);
        });
      }
    }
    res.end();
  } else {
    const headers: Record<string, string> = { "content-type": "text/plain", ...(fault.headers ?? {}) };
    if (fault.retryAfter !== undefined) headers["retry-after"] = fault.retryAfter;
    res.writeHead(fault.status, headers);
    res.end(fault.body ?? `fake provider fault: HTTP ${fault.status}`);
  }
}

function abortOnClose(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once("close", () => controller.abort());
  return controller.signal;
}
