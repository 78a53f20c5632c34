/**
 * The pinned default transport of downloads against a real loopback HTTPS publisher: the address the
 * check passed is the address connected to, so a DNS answer that turns to 127.0.0.1 after the check
 * (rebinding) reaches nothing; with loopback allowed it downloads, resumes with Range, returns a 3xx
 * unfollowed and stops on abort.
 */
import { readFile } from "node:fs/promises";
import { request } from "node:https";
import { Readable } from "node:stream";
import { afterEach, describe, expect, test } from "vitest";
import type { DownloadFetch } from "../../src/artifacts/download-fetch.js";
import type { DownloadLookup, PrivateAddressAllowance } from "../../src/artifacts/download-host-check.js";
import type { DownloadManagerOptions } from "../../src/artifacts/download-types.js";
import { createPinnedHttpsFetch } from "../../src/artifacts/pinned-https-fetch.js";
import { systemClock } from "../../src/core/clock.js";
import { createBench, makeCandidate, PDF } from "./download-harness.js";
import {
  HAS_OPENSSL,
  type HttpsPublisher,
  PUBLISHER_HOST,
  type PublisherRoute,
  stallingRoute,
  startHttpsPublisher,
} from "./https-publisher.js";

const CALL = {
  mcpInvocationId: "inv-1",
  candidateId: "c1",
  sessionId: "s1",
  threadId: "t1",
  toolCallId: "k1",
};
const address = (value: string) => ({ address: value, family: value.includes(":") ? 6 : 4 });

/** Overrides the bench's fake fetch with `undefined`: the manager builds its default transport. */
const DEFAULT_FETCH = { fetch: undefined } as unknown as Partial<DownloadManagerOptions>;

/** A rebinding record: a public address on the first lookup, 127.0.0.1 on every later one. */
function rebindingLookup() {
  const answers: string[] = [];
  const lookup: DownloadLookup = async () => {
    answers.push(answers.length === 0 ? "203.0.113.7" : "127.0.0.1");
    return [address(answers.at(-1) ?? "")];
  };
  return { lookup, answers };
}

/** A range-honouring route serving `bytes`. */
const servedRoute =
  (bytes: Uint8Array): PublisherRoute =>
  (req, res) => {
    const start = Number(/bytes=(\d+)-/.exec(req.headers.range ?? "")?.[1] ?? 0);
    res.writeHead(start > 0 ? 206 : 200, { "content-length": String(bytes.length - start) });
    res.end(bytes.subarray(start));
  };

/**
 * What the default transport did before: resolve the host again on its own (here through the same seam,
 * as `globalThis.fetch` does through the system resolver) and connect to that answer.
 */
function unpinnedFetch(publisher: HttpsPublisher, lookup: DownloadLookup): DownloadFetch {
  return async (url, init) => {
    const target = new URL(url);
    const [first] = await lookup(target.hostname);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: first?.address,
          port: publisher.port,
          servername: target.hostname,
          path: target.pathname,
          headers: { ...(init.headers as Record<string, string>), host: target.hostname },
          ca: publisher.ca,
        },
        (res) => resolve(new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, { status: 200 })),
      );
      req.on("error", reject);
      req.end();
    });
  };
}

describe.skipIf(!HAS_OPENSSL)("the pinned default download transport", () => {
  let publisher: HttpsPublisher | undefined;
  const seenHeaders: Record<string, string | string[] | undefined>[] = [];
  afterEach(async () => {
    await publisher?.close();
    publisher = undefined;
    seenHeaders.length = 0;
  });

  async function start(extra: Record<string, PublisherRoute> = {}) {
    const started = await startHttpsPublisher({
      "/paper.pdf": (req, res) => {
        seenHeaders.push(req.headers);
        servedRoute(PDF)(req, res);
      },
      "/hop": (_req, res) => res.writeHead(302, { location: "/paper.pdf" }).end(),
      ...extra,
    });
    publisher = started;
    return started;
  }

  const pinned = (p: HttpsPublisher, lookup: DownloadLookup, allowance: PrivateAddressAllowance = false) =>
    createPinnedHttpsFetch({ lookup, allowance, ca: p.ca, defaultPort: p.port });

  async function download(options: Partial<DownloadManagerOptions>) {
    const bench = await createBench([makeCandidate({ url: `https://${PUBLISHER_HOST}/paper.pdf` })], {
      hosts: [PUBLISHER_HOST],
      clock: systemClock,
      initialBackoffMs: 1,
      ...options,
    });
    return bench.download(CALL);
  }

  test("rebinding: unpinned, the check passes on 203.0.113.7 and the connection reaches loopback", async () => {
    const p = await start();
    const dns = rebindingLookup();
    const result = await download({
      lookup: dns.lookup,
      fetch: unpinnedFetch(p, dns.lookup),
      maxAttempts: 1,
    });
    expect(dns.answers).toEqual(["203.0.113.7", "127.0.0.1"]);
    expect(result.status).toBe("completed");
    expect(p.requests).toHaveLength(1);
  });

  test("rebinding: pinned, the answer the socket connects to is screened: refused, 0 requests", async () => {
    const p = await start();
    const dns = rebindingLookup();
    const result = await download({ lookup: dns.lookup, fetch: pinned(p, dns.lookup), maxAttempts: 1 });
    expect(dns.answers).toEqual(["203.0.113.7", "127.0.0.1"]);
    expect(result).toMatchObject({
      status: "failed",
      error: { code: "PERMISSION_DENIED", retryable: false },
    });
    expect(result.error?.message).toContain(`Refused host '${PUBLISHER_HOST}': it resolves to 127.0.0.1`);
    expect(p.requests).toHaveLength(0);
    expect(p.connections()).toBe(0);
  });

  test("rebinding: the manager's default fetch (none injected) is the pinned one", async () => {
    const dns = rebindingLookup();
    const result = await download({ lookup: dns.lookup, maxAttempts: 1, ...DEFAULT_FETCH });
    expect(result).toMatchObject({ status: "failed", error: { code: "PERMISSION_DENIED" } });
    expect(result.error?.message).toContain("it resolves to 127.0.0.1, a loopback address");
  });

  test("a host answering a public and a loopback address is refused, not filtered", async () => {
    const p = await start();
    const lookup: DownloadLookup = async () => [address("203.0.113.7"), address("127.0.0.1")];
    const response = createPinnedHttpsFetch({ lookup, ca: p.ca, defaultPort: p.port })(
      `https://${PUBLISHER_HOST}/paper.pdf`,
      { redirect: "manual" },
    );
    await expect(response).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("it resolves to 127.0.0.1"),
    });
    expect(p.connections()).toBe(0);
  });

  test("an IP-literal URL is screened too (no lookup to pin)", async () => {
    const p = await start();
    const fetch = createPinnedHttpsFetch({ lookup: async () => [], ca: p.ca });
    await expect(fetch(`https://127.0.0.1:${p.port}/paper.pdf`, {})).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
    });
    expect(p.connections()).toBe(0);
  });

  test("with 127.0.0.0/8 allowed a download completes and a dropped one resumes with Range", async () => {
    let drops = 1;
    const p = await start({
      "/flaky.pdf": (req, res) => {
        if (drops-- > 0) {
          res.writeHead(200, { "content-length": String(PDF.length) });
          // Cut after the client has read the first 1000 bytes (a drop discards what is still queued).
          res.write(PDF.subarray(0, 1000), () => setTimeout(() => res.destroy(), 100));
          return;
        }
        servedRoute(PDF)(req, res);
      },
    });
    const loopback: DownloadLookup = async () => [address("127.0.0.1")];
    const bench = await createBench([makeCandidate({ url: `https://${PUBLISHER_HOST}/flaky.pdf` })], {
      hosts: [PUBLISHER_HOST],
      clock: systemClock,
      initialBackoffMs: 1,
      lookup: loopback,
      allowPrivateAddresses: ["127.0.0.0/8"],
      fetch: pinned(p, loopback, ["127.0.0.0/8"]),
    });
    const result = await bench.download(CALL);
    expect(result).toMatchObject({ status: "completed", bytesDownloaded: PDF.length });
    expect(new Uint8Array(await readFile(result.finalPath))).toEqual(PDF);
    expect(p.requests).toEqual([
      { path: "/flaky.pdf", range: undefined },
      { path: "/flaky.pdf", range: "bytes=1000-" },
    ]);
  });

  test("a 3xx comes back unfollowed with its Location; identity encoding; the response names its URL", async () => {
    const p = await start();
    const fetch = pinned(p, async () => [address("127.0.0.1")], true);
    const hop = await fetch(`https://${PUBLISHER_HOST}/hop`, { redirect: "manual" });
    expect(hop.status).toBe(302);
    expect(hop.headers.get("location")).toBe("/paper.pdf");
    expect(p.requests.map((r) => r.path)).toEqual(["/hop"]);
    const ok = await fetch(`https://${PUBLISHER_HOST}/paper.pdf`, { headers: { range: "bytes=4000-" } });
    expect(ok.status).toBe(206);
    expect(ok.url).toBe(`https://${PUBLISHER_HOST}/paper.pdf`);
    expect(new Uint8Array(await ok.arrayBuffer())).toEqual(PDF.subarray(4000));
    expect(seenHeaders[0]?.["accept-encoding"]).toBe("identity");
  });

  test("TLS is verified: without the test CA the self-signed publisher is refused", async () => {
    const p = await start();
    const fetch = createPinnedHttpsFetch({
      lookup: async () => [address("127.0.0.1")],
      allowance: true,
      defaultPort: p.port,
    });
    await expect(fetch(`https://${PUBLISHER_HOST}/paper.pdf`, {})).rejects.toThrow(/self.signed/i);
    expect(p.requests).toHaveLength(0);
  });

  test("abort mid-body errors the stream and closes the connection", async () => {
    let closed: () => void = () => {};
    const serverClosed = new Promise<void>((resolve) => {
      closed = resolve;
    });
    const p = await start({
      "/stall": (req, res) => {
        res.on("close", closed);
        stallingRoute(PDF.subarray(0, 100), PDF.length)(req, res);
      },
    });
    const controller = new AbortController();
    const fetch = pinned(p, async () => [address("127.0.0.1")], true);
    const response = await fetch(`https://${PUBLISHER_HOST}/stall`, { signal: controller.signal });
    const reader = response.body?.getReader();
    expect((await reader?.read())?.value?.byteLength).toBe(100);
    const next = reader?.read();
    controller.abort();
    await expect(next).rejects.toThrow();
    await serverClosed;
  });
});
