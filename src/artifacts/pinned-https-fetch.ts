/**
 * The default transport of governed downloads: an HTTPS client on `node:https` whose sockets resolve the
 * host through the download DNS seam and the address screen, so the address checked is the address
 * connected to. The global `fetch` resolves the name again on its own, and a DNS answer that changes
 * between the check and the connection (rebinding) would reach the machine's own network.
 */
import type { IncomingMessage } from "node:http";
import { Agent, type AgentOptions, request } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { Readable } from "node:stream";
import type { DownloadFetch } from "./download-fetch.js";
import {
  createAddressScreen,
  type DownloadLookup,
  defaultDownloadLookup,
  type PrivateAddressAllowance,
} from "./download-host-check.js";

/** Input of {@link createPinnedHttpsFetch}. */
export interface PinnedHttpsFetchOptions {
  /** Resolves each connection's host. @default `node:dns/promises` lookup, all addresses */
  lookup?: DownloadLookup;
  /** Which non-public addresses a connection may reach (`allowPrivateAddresses`). @default false */
  allowance?: PrivateAddressAllowance;
  /** Certificates to trust instead of the system CAs (tests against a self-signed server). @default Node's CAs */
  ca?: AgentOptions["ca"];
  /** The port a URL without one connects to (tests point it at a loopback server). @default 443 */
  defaultPort?: number;
}

// Statuses whose Response must have a null body.
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * Builds a download fetch over `node:https` pinned to screened addresses. Every socket resolves its host
 * through `lookup` and connects only to addresses the screen passed (a host with any non-public address
 * that is not allowed is refused, not filtered: `PERMISSION_DENIED` naming host and address, before any
 * connection). It never follows redirects (a 3xx comes back with its `Location`), asks for
 * `accept-encoding: identity` and never decompresses, verifies TLS against the system CAs, and an abort of
 * `init.signal` destroys the request and its socket. Each socket is used once (no keep-alive pool, so no
 * socket outlives the answer it was checked against).
 * @param options the DNS seam, the allowance, and for tests a CA and default port
 * @returns the fetch seam: a WHATWG `Response` with status, headers, `url` and a streaming body
 * @throws GovernanceError `INVALID_INPUT` for an allowance entry that is no host, address or CIDR
 */
export function createPinnedHttpsFetch(options: PinnedHttpsFetchOptions = {}): DownloadFetch {
  const screen = createAddressScreen(options.lookup ?? defaultDownloadLookup, options.allowance ?? false);
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    screen(hostname).then(
      (addresses) => {
        if (lookupOptions.all)
          callback(
            null,
            addresses.map(({ address, family }) => ({ address, family })),
          );
        else callback(null, addresses[0]?.address ?? "", addresses[0]?.family ?? 4);
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, ""),
    );
  };
  const agent = new Agent({ keepAlive: false, lookup });
  const port = options.defaultPort ?? 443;
  return (url, init) => {
    const target = new URL(url);
    if (target.protocol !== "https:") {
      return Promise.reject(
        new TypeError(`The pinned download fetch speaks https: only, not ${target.protocol}`),
      );
    }
    const hostname = target.hostname.startsWith("[") ? target.hostname.slice(1, -1) : target.hostname;
    const headers: Record<string, string> = { "accept-encoding": "identity" };
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    // An IP literal never reaches the socket's lookup: screen it here.
    const literal = isIP(hostname) === 0 ? Promise.resolve() : screen(target.hostname).then(() => undefined);
    return literal.then(
      () =>
        new Promise<Response>((resolve, reject) => {
          const req = request(
            {
              agent,
              lookup,
              hostname,
              port: target.port === "" ? port : Number(target.port),
              path: `${target.pathname}${target.search}`,
              method: init.method ?? "GET",
              headers,
              ...(options.ca === undefined ? {} : { ca: options.ca }),
              ...(init.signal ? { signal: init.signal } : {}),
            },
            (res) => {
              try {
                resolve(toResponse(res, url));
              } catch (error) {
                res.destroy();
                reject(error);
              }
            },
          );
          req.on("error", reject);
          req.end();
        }),
    );
  };
}

function toResponse(res: IncomingMessage, url: string): Response {
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    headers.append(res.rawHeaders[i] ?? "", res.rawHeaders[i + 1] ?? "");
  }
  const status = res.statusCode ?? 502;
  let body: ReadableStream<Uint8Array> | null = null;
  if (NULL_BODY.has(status)) res.resume();
  else body = Readable.toWeb(res) as ReadableStream<Uint8Array>;
  const response = new Response(body, { status, headers });
  // A constructed Response has an empty `url`; the transfer reads it as the final address.
  Object.defineProperty(response, "url", { value: url });
  return response;
}
