/**
 * A loopback HTTPS publisher for download tests: a real `node:https` server on 127.0.0.1 (free port)
 * with a self-signed certificate made by `openssl` at test time for the host `publisher.test`, and a
 * real HTTPS client as the download `fetch` seam that trusts that certificate and connects to the
 * loopback port (the stand-in for DNS: the URL keeps `https://publisher.test/…`, no port).
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, request } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { DownloadFetch } from "../../src/artifacts/download-fetch.js";

/** The publisher's host name (what the certificate names and the manifest allow-lists). */
export const PUBLISHER_HOST = "publisher.test";

/** Whether `openssl` can make the test certificate here (the tests that need it skip visibly if not). */
export const HAS_OPENSSL = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** A path's handler; `res` is left open by handlers that stall. */
export type PublisherRoute = (req: IncomingMessage, res: ServerResponse) => void;

/** A running publisher. */
export interface HttpsPublisher {
  /** Every request the server saw, as `path` (with `range` when sent). */
  requests: { path: string; range: string | undefined }[];
  /** TLS connections the server accepted. */
  connections: () => number;
  /** The loopback port it listens on. */
  port: number;
  /** Its self-signed certificate (what a client must trust). */
  ca: Buffer;
  /** The `fetch` seam: a real HTTPS client trusting the test certificate, connecting to the loopback port. */
  fetch: DownloadFetch;
  close: () => Promise<void>;
}

/**
 * Starts a publisher serving `routes` by path (others get 404).
 * @param routes handlers by URL path
 * @returns the publisher
 */
export async function startHttpsPublisher(routes: Record<string, PublisherRoute>): Promise<HttpsPublisher> {
  const dir = await mkdtemp(join(tmpdir(), "sciencegate-publisher-"));
  const [key, cert] = [join(dir, "key.pem"), join(dir, "cert.pem")];
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
      .concat(["-keyout", key, "-out", cert, "-days", "1", "-subj", `/CN=${PUBLISHER_HOST}`])
      .concat(["-addext", `subjectAltName=DNS:${PUBLISHER_HOST}`]),
    { stdio: "ignore" },
  );
  const ca = await readFile(cert);
  const requests: HttpsPublisher["requests"] = [];
  let connections = 0;
  const server = createServer({ key: await readFile(key), cert: ca }, (req, res) => {
    const path = new URL(req.url ?? "/", `https://${PUBLISHER_HOST}`).pathname;
    requests.push({ path, range: req.headers.range });
    const route = routes[path];
    if (route) route(req, res);
    else res.writeHead(404).end("not found");
  });
  server.on("secureConnection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const fetch: DownloadFetch = (url, init) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      const req = request(
        {
          host: "127.0.0.1",
          port,
          servername: target.hostname,
          path: `${target.pathname}${target.search}`,
          headers: { ...(init.headers as Record<string, string>), host: target.hostname },
          ca,
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (typeof value === "string") headers.set(name, value);
          }
          const body = Readable.toWeb(res) as ReadableStream<Uint8Array>;
          resolve(new Response(body, { status: res.statusCode ?? 502, headers }));
        },
      );
      req.on("error", reject);
      req.end();
    });
  return {
    requests,
    connections: () => connections,
    port,
    ca,
    fetch,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A route that sends `bytes` one at a time, `intervalMs` apart (a trickling body).
 * @param bytes the body
 * @param intervalMs the pause between bytes
 */
export function tricklingRoute(bytes: Uint8Array, intervalMs: number): PublisherRoute {
  return (_req, res) => {
    res.writeHead(200, { "content-length": String(bytes.length) });
    res.flushHeaders();
    let sent = 0;
    const timer = setInterval(() => {
      if (sent >= bytes.length) {
        clearInterval(timer);
        res.end();
        return;
      }
      res.write(bytes.subarray(sent, sent + 1));
      sent++;
    }, intervalMs);
    res.on("close", () => clearInterval(timer));
  };
}

/** A route that accepts the request and never answers (no status line, no headers). */
export const silentRoute: PublisherRoute = () => {};

/**
 * A route that sends `first` bytes of a `total`-byte body, then stalls without closing.
 * @param first what arrives
 * @param total the announced length
 */
export function stallingRoute(first: Uint8Array, total: number): PublisherRoute {
  return (_req, res) => {
    res.writeHead(200, { "content-length": String(total) });
    res.write(first);
  };
}
