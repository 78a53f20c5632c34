/**
 * A loopback HTTP publisher whose bodies the test paces: a real `node:http` server on 127.0.0.1 (free
 * port) that sends each body in parts, optionally holding after the first part until the test releases
 * it, and the download `fetch` seam that sends each `https://<host>/<path>` request to it (the stand-in
 * for DNS, so the URL keeps the allow-listed host).
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { DownloadFetch } from "../../src/artifacts/download-fetch.js";

/** How one path is served. */
export interface PacedBody {
  bytes: Uint8Array;
  /** Parts the body is sent in. */
  parts: number;
  /**
   * Send only the first part, then one more per credit `release(path, n)` gives.
   * @default false: the parts follow each other
   */
  hold?: boolean;
}

/** A running publisher. */
export interface PacedPublisher {
  /** The download `fetch` seam: every URL's path, on the loopback port. */
  fetch: DownloadFetch;
  /** Serves `body` at `path` (e.g. `/pdf/2401.00001v1`); other paths get 404. */
  serve(path: string, body: PacedBody): void;
  /** Lets a held body at `path` send `parts` more parts. @default all of them */
  release(path: string, parts?: number): void;
  /** Bodies at `path` whose client went away before their end. */
  abandoned(path: string): number;
  /** Settles when a body at `path` is abandoned by its client (a cancelled transfer). */
  abandonedOnce(path: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a publisher.
 * @returns the publisher (close it after the test)
 */
export async function startPacedPublisher(): Promise<PacedPublisher> {
  const bodies = new Map<string, PacedBody>();
  /** Parts a held body may still send, and the sender waiting for one. */
  const credits = new Map<string, { left: number; waiting?: (() => void) | undefined }>();
  const abandoned = new Map<string, number>();
  const abandonWaiters = new Map<string, () => void>();
  const abandonPromises = new Map<string, Promise<void>>();
  const creditOf = (path: string) => {
    let credit = credits.get(path);
    if (credit === undefined) {
      credit = { left: 0 };
      credits.set(path, credit);
    }
    return credit;
  };
  const nextCredit = async (path: string) => {
    const credit = creditOf(path);
    while (credit.left <= 0) await new Promise<void>((resolve) => (credit.waiting = resolve));
    credit.left--;
  };
  const release = (path: string, parts = Number.POSITIVE_INFINITY) => {
    const credit = creditOf(path);
    credit.left += parts;
    credit.waiting?.();
    credit.waiting = undefined;
  };
  const abandonedOnce = (path: string) => {
    let promise = abandonPromises.get(path);
    if (promise === undefined) {
      promise = new Promise<void>((resolve) => abandonWaiters.set(path, resolve));
      abandonPromises.set(path, promise);
    }
    return promise;
  };
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://publisher").pathname;
    const body = bodies.get(path);
    if (body) void send(path, body, res);
    else res.writeHead(404).end("not found");
  });
  async function send(path: string, body: PacedBody, res: ServerResponse): Promise<void> {
    res.on("close", () => {
      if (res.writableFinished) return;
      abandoned.set(path, (abandoned.get(path) ?? 0) + 1);
      void abandonedOnce(path);
      abandonWaiters.get(path)?.();
    });
    const { bytes, parts } = body;
    res.writeHead(200, { "content-type": "application/pdf", "content-length": String(bytes.length) });
    const size = Math.ceil(bytes.length / parts);
    for (let start = 0; start < bytes.length; start += size) {
      if (start > 0) {
        if (body.hold) await nextCredit(path);
        else await new Promise((resolve) => setImmediate(resolve));
      }
      if (res.destroyed) return;
      res.write(bytes.subarray(start, start + size));
    }
    res.end();
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    fetch: (url, init) => fetch(`http://127.0.0.1:${port}${new URL(url).pathname}`, init),
    serve: (path, body) => bodies.set(path, body),
    release,
    abandoned: (path) => abandoned.get(path) ?? 0,
    abandonedOnce,
    close: () =>
      new Promise<void>((resolve) => {
        for (const path of credits.keys()) release(path);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
