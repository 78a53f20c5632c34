/**
 * The Invocations page over HTTP: filters (source, tool, session, outcome and error code, cache, time
 * range, text), newest first, keyset pages without gaps or repeats, the page-size cap, the count and the
 * activity chart, clear 400s for bad filters, and escaped third-party values.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type ConsoleServer, serveConsole } from "../../src/console/index.js";
import type { InvocationRecord } from "../../src/governance/audit/index.js";
import { createLab, type Lab } from "../gateway/gateway-harness.js";

const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);
let lab: Lab;
let server: ConsoleServer;

/** 250 rows, one a minute: every 7th an error, every 5th a cache hit, three sources, two sessions. */
function makeRow(i: number): InvocationRecord {
  const started = T0 + i * 60_000;
  const error = i % 7 === 0;
  return {
    invocationId: `inv-${String(i).padStart(4, "0")}`,
    sessionId: i % 2 === 0 ? "session-even" : "session-odd",
    threadId: i % 2 === 0 ? "session-even" : "session-odd",
    sourceId: ["pubmed", "arxiv", "uniprot"][i % 3] as string,
    toolId: i % 3 === 2 ? "lookup" : "search",
    status: error ? "error" : "ok",
    startedAt: new Date(started).toISOString(),
    finishedAt: new Date(started + 40).toISOString(),
    durationMs: 40,
    attempts: error ? 3 : 1,
    cacheHit: !error && i % 5 === 0,
    queueWaitMs: i % 4,
    ...(error
      ? {
          error: {
            code: i % 2 === 0 ? "TIMEOUT" : "RATE_LIMITED",
            message: `attempt ${i} failed`,
            retryable: true,
            attempts: 3,
          },
        }
      : {}),
  };
}

beforeAll(async () => {
  lab = await createLab();
  for (let i = 0; i < 250; i++) await lab.governance.ledgerWriter.append(makeRow(i));
  await lab.governance.ledgerWriter.append({
    ...makeRow(250),
    invocationId: "inv-hostile",
    sourceId: "hostile",
    threadId: "hostile",
    cacheHit: false,
    sessionId: `<script>alert("s")</script>`,
    error: { code: "TOOL_FAILED", message: `<img src=x onerror=alert(1)>`, retryable: false, attempts: 1 },
    status: "error",
  });
  server = await serveConsole({ governance: lab.governance, port: 0 });
});

afterAll(async () => {
  await server?.close();
  await lab?.governance.close();
});

async function page(query: string): Promise<{ status: number; html: string; ids: string[] }> {
  const response = await fetch(`${server.url}/invocations${query}`);
  const html = await response.text();
  const ids = [...html.matchAll(/<tr data-id="([^"]+)">/g)].map((m) => m[1] as string);
  return { status: response.status, html, ids };
}

const countOf = (html: string) =>
  Number(/id="match-count">([\d,]+) invocation/.exec(html)?.[1]?.replace(/,/g, ""));
const nextOf = (html: string) => /id="next-page" href="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, "&");

describe("the Invocations page", () => {
  test("newest first, 50 to a page, every row once across keyset pages", async () => {
    const first = await page("");
    expect(first.status).toBe(200);
    expect(countOf(first.html)).toBe(251);
    expect(first.ids).toHaveLength(50);
    expect(first.ids[0]).toBe("inv-hostile");
    expect(first.ids[1]).toBe("inv-0249");
    const seen = [...first.ids];
    let next = nextOf(first.html);
    while (next) {
      const response = await fetch(`${server.url}${next}`);
      const html = await response.text();
      seen.push(...[...html.matchAll(/<tr data-id="([^"]+)">/g)].map((m) => m[1] as string));
      next = nextOf(html);
    }
    expect(seen).toHaveLength(251);
    expect(new Set(seen).size).toBe(251);
    expect(seen.at(-1)).toBe("inv-0000");
  });

  test("the page size is capped at 200; a size that is not a positive whole number is a 400", async () => {
    expect((await page("?size=10")).ids).toHaveLength(10);
    expect((await page("?size=100000")).ids).toHaveLength(200);
    for (const bad of ["0", "-1", "2.5", "many"]) {
      const response = await page(`?size=${bad}`);
      expect(response.status).toBe(400);
      expect(response.html).toContain("page size");
    }
  });

  test("filters combine: source, tool, session, outcome and code, cache, time range, text", async () => {
    const rows = Array.from({ length: 250 }, (_, i) => makeRow(i));
    const expectCount = async (query: string, keep: (row: InvocationRecord) => boolean) => {
      const result = await page(query);
      expect(result.status, query).toBe(200);
      expect(countOf(result.html), query).toBe(rows.filter(keep).length);
      return result;
    };
    await expectCount("?source=arxiv", (r) => r.sourceId === "arxiv");
    await expectCount("?source=uniprot&tool=lookup", (r) => r.sourceId === "uniprot");
    await expectCount(
      "?session=session-odd&status=error",
      (r) => r.sessionId === "session-odd" && r.status === "error",
    );
    await expectCount("?code=TIMEOUT", (r) => r.error?.code === "TIMEOUT");
    await expectCount("?cache=hit", (r) => r.cacheHit);
    await expectCount(
      "?thread=session-even&cache=miss&status=ok",
      (r) => r.threadId === "session-even" && !r.cacheHit && r.status === "ok",
    );
    const from = new Date(T0 + 100 * 60_000).toISOString().slice(0, 19);
    const to = new Date(T0 + 110 * 60_000).toISOString().slice(0, 19);
    const ranged = await expectCount(`?from=${from}&to=${to}`, (r) => {
      const ms = Date.parse(r.startedAt);
      return ms >= T0 + 100 * 60_000 && ms < T0 + 110 * 60_000;
    });
    expect(ranged.ids).toEqual(Array.from({ length: 10 }, (_, k) => `inv-0${109 - k}`));
    await expectCount("?q=attempt%2014%20failed", (r) => r.invocationId === "inv-0014");
    await expectCount("?q=INV-012", (r) => r.invocationId.startsWith("inv-012"));
  });

  test("the chart counts calls per outcome over time, and per source", async () => {
    const { html } = await page("?source=pubmed");
    expect(html).toContain('<figure class="activity" id="activity">');
    const pubmed = Array.from({ length: 250 }, (_, i) => makeRow(i)).filter((r) => r.sourceId === "pubmed");
    const ok = pubmed.filter((r) => r.status === "ok").length;
    const errors = pubmed.length - ok;
    expect(html).toMatch(
      new RegExp(`<code>pubmed</code></a></td><td class="num">${ok}</td><td class="num">${errors}</td>`),
    );
    const bars = [...html.matchAll(/<title>([^<]+): (\d+) ok, (\d+) errors<\/title>/g)];
    expect(bars.length).toBeGreaterThan(1);
    expect(bars.reduce((n, m) => n + Number(m[2]), 0)).toBe(ok);
    expect(bars.reduce((n, m) => n + Number(m[3]), 0)).toBe(errors);
  });

  test("bad filters are a clear 400 naming the field", async () => {
    for (const [query, text] of [
      ["?status=maybe", "'status' takes ok or error"],
      ["?cache=yes", "'cache' takes hit or miss"],
      ["?from=yesterday", "'from' is not a time"],
      [`?q=${"x".repeat(201)}`, "'q' is 201 characters long"],
    ] as const) {
      const response = await page(query);
      expect(response.status, query).toBe(400);
      expect(response.html).toContain(text.replace(/'/g, "&#39;"));
    }
    const unknown = await page("?after=no-such-row");
    expect(unknown.status).toBe(404);
  });

  test("third-party values render as text", async () => {
    const { html } = await page("?q=inv-hostile");
    expect(html).toContain("&lt;script&gt;alert(&quot;s&quot;)&lt;/script&gt;");
    expect(html).not.toContain('<script>alert("s")');
    expect(html).not.toContain("<img src=x");
  });
});
