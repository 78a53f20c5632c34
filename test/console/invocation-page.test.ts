/**
 * The invocation page and `/objects/:ref` over a real runtime: rows made by real broker calls against
 * the loopback ChEMBL fake (one row appended the way another writer could, to carry a `javascript:`
 * citation the broker itself would drop), fetched over HTTP from `serveConsole`.
 */
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { OBJECT_SERVE_LIMIT } from "../../src/console/page-object.js";
import type { McpRecord } from "../../src/contract/result-types.js";
import type { InvocationRecord } from "../../src/governance/audit/ledger.js";
import {
  type ConsoleRuntime,
  elementById,
  HOSTILE_TITLE_ESCAPED,
  hrefs,
  startConsoleRuntime,
} from "./console-runtime.js";

let runtime: ConsoleRuntime;
/** The rows: the hostile search (100 records), an imatinib search, a refused call, a foreign row. */
const rows: Record<"hostile" | "imatinib" | "invalid" | "foreign", InvocationRecord> = {} as never;

function casFile(ref: string): string {
  const hex = ref.slice("sha256:".length);
  return join(runtime.dataDir, "cas", "sha256", hex.slice(0, 2), hex);
}

async function row(invocationId: string): Promise<InvocationRecord> {
  const found = await runtime.governance.ledger.get(invocationId);
  if (!found) throw new Error(`no row ${invocationId}`);
  return found;
}

beforeAll(async () => {
  runtime = await startConsoleRuntime();
  const { broker, store } = runtime.governance;
  const hostile = await broker.invoke({
    sourceId: "chembl",
    toolId: "search_molecules",
    input: { query: "hostile", max_results: 100 },
    sessionId: "s-console",
    threadId: "t-console",
    toolCallId: "call-hostile",
    runId: "run-1",
  });
  const imatinib = await broker.invoke({
    sourceId: "chembl",
    toolId: "search_molecules",
    input: { query: "imatinib" },
    sessionId: "s-console",
  });
  const invalid = await broker
    .invoke({
      sourceId: "chembl",
      toolId: "search_molecules",
      input: { query: "imatinib", max_results: 1000 },
      sessionId: "s-console",
    })
    .then(
      () => "",
      (error: { data?: { invocationId?: string } }) => error.data?.invocationId ?? "",
    );
  rows.hostile = await row(hostile.invocationId);
  rows.imatinib = await row(imatinib.invocationId);
  rows.invalid = await row(invalid);
  // Another writer's row whose record cites script URLs: the broker drops such records, the page must
  // still render them inert.
  const citation = (url: string) => ({ label: `[X:1](${url})`, url });
  const record: McpRecord = {
    identifier: "X1",
    identifierType: "id",
    title: "Foreign record",
    url: "JaVaScRiPt:alert(4)",
    source: "foreign",
    citations: [
      citation("javascript:alert(3)"),
      citation("data:text/html,<b>x</b>"),
      citation("https://example.org/x1"),
    ],
    primaryCitation: citation("javascript:alert(3)"),
    contentScope: "metadata",
    crossReferences: [],
    fullTextRetrieved: false,
    warnings: [],
  };
  rows.foreign = {
    invocationId: "foreign-1",
    sessionId: "s-other",
    sourceId: "foreign",
    toolId: "search",
    status: "ok",
    startedAt: "2026-01-01T00:00:00Z",
    finishedAt: "2026-01-01T00:00:01Z",
    durationMs: 1000,
    attempts: 1,
    cacheHit: false,
    queueWaitMs: 0,
    requestRef: (await store.putJson({ sourceId: "foreign", toolId: "search", input: {} })).ref,
    normalizedRef: (await store.putJson({ records: [record], warnings: ["<b>bold warning</b>"] })).ref,
    authorizationId: "auth-missing",
  };
  await runtime.governance.ledgerWriter.append(rows.foreign);
}, 60_000);

afterAll(async () => {
  await runtime?.close();
});

describe("GET /invocations/:id", () => {
  test("what was called, for whom, and who allowed it", async () => {
    const { status, body } = await runtime.get(`/invocations/${rows.hostile.invocationId}`);
    expect(status).toBe(200);
    const invocation = elementById(body, "invocation");
    for (const text of [
      rows.hostile.invocationId,
      "chembl",
      "search_molecules",
      "chembl_search_molecules",
      "s-console",
      "t-console",
      "call-hostile",
      "run-1",
      "CC-BY-SA-3.0",
      rows.hostile.catalogRevision ?? "missing",
      rows.hostile.toolDefinitionHash ?? "missing",
      rows.hostile.inputHash ?? "missing",
      "<dt>Attempts</dt><dd>1</dd>",
      "<dt>Cache hit</dt><dd>no",
      `${rows.hostile.durationMs.toLocaleString("en")} ms`,
    ]) {
      expect(invocation).toContain(text);
    }
    expect(invocation).toContain('data-status="ok"');
    // This console reads no checkpointer: no thread answer to review.
    expect(invocation).not.toContain("/evidence?thread=");
    expect(hrefs(invocation)).toContain("/evidence?session=s-console");
    expect(invocation).toContain(`datetime="${new Date(rows.hostile.startedAt).toISOString()}"`);
    const [authorization] = await runtime.governance.ledger.listAuthorizations({ sessionId: "s-console" });
    expect(rows.hostile.authorizationId).toBe(authorization?.id);
    const allowed = elementById(body, "authorization");
    expect(allowed).toContain(`data-id="${authorization?.id}"`);
    expect(allowed).toContain("<code data-decision-source>policy_not_dangerous</code>");
    expect(allowed).toContain("<code>chembl:search_molecules</code>");
    expect(allowed).toContain("<dt>Epoch</dt><dd>1</dd>");
    // The arguments, from the stored request.
    expect(elementById(body, "request")).toContain("&quot;query&quot;: &quot;hostile&quot;");
  });

  test("records: a hostile title renders only as text, citations link to their https URLs", async () => {
    const { body } = await runtime.get(`/invocations/${rows.hostile.invocationId}`);
    const records = elementById(body, "records");
    expect(records.match(/<tr data-id="CHEMBL99\d{4}">/g)).toHaveLength(100);
    expect(records).toContain(`<td class="record-title">${HOSTILE_TITLE_ESCAPED}</td>`);
    // Nowhere raw: the only script is the console's own file, and no element carries a handler.
    expect(body).not.toContain("<script>alert");
    expect(body).not.toContain("<img");
    expect(body.match(/<script\b[^>]*>/g)).toEqual([`<script src="/assets/console.js" defer>`]);
    expect(body).not.toMatch(/<[a-z]+\s[^>]*\bon[a-z]+=/i);
    expect(hrefs(elementById(records, "records"))).toContain(
      "https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL990000",
    );
    expect(records).toContain(
      '<a href="https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL990001" rel="noopener noreferrer nofollow" target="_blank">CHEMBL990001</a>',
    );
  });

  test("a javascript: or data: URL is text, never a link", async () => {
    const { status, body } = await runtime.get("/invocations/foreign-1");
    expect(status).toBe(200);
    const records = elementById(body, "records");
    expect(records).toContain(
      '<span class="unsafe-url" title="Not an http(s) link: shown as text">JaVaScRiPt:alert(4)</span>',
    );
    expect(records).toContain(
      '<span class="unsafe-url" title="Not an http(s) link: shown as text">X:1</span>',
    );
    expect(hrefs(body).filter((href) => !href.startsWith("/") && !href.startsWith("https://"))).toEqual([]);
    expect(body).not.toMatch(/href="\s*(javascript|data):/i);
    expect(hrefs(records)).toEqual(["https://example.org/x1"]);
    // Third-party warnings are text too; the named authorization is missing from its session.
    expect(body).toContain("<li>&lt;b&gt;bold warning&lt;/b&gt;</li>");
    expect(elementById(body, "authorization")).toContain("auth-missing");
    expect(elementById(body, "authorization")).toContain("has no such authorization row");
  });

  test("a failed call: its error code, message and retryable; no result stored", async () => {
    const { body } = await runtime.get(`/invocations/${rows.invalid.invocationId}`);
    const invocation = elementById(body, "invocation");
    expect(invocation).toContain('data-status="error"');
    expect(invocation).toContain("<code data-error-code>INVALID_INPUT</code>");
    expect(invocation).toContain("max_results: must be &lt;= 100");
    expect(invocation).toContain("<dt>Retryable</dt><dd>no</dd>");
    expect(elementById(body, "object-table")).toContain('data-object="raw" data-integrity="none"');
    expect(elementById(body, "result")).toContain("No result was stored");
  });

  test("each stored object is re-hashed: all three verify", async () => {
    const { body } = await runtime.get(`/invocations/${rows.hostile.invocationId}`);
    const table = elementById(body, "object-table");
    for (const [key, ref] of [
      ["request", rows.hostile.requestRef],
      ["raw", rows.hostile.rawRef],
      ["normalized", rows.hostile.normalizedRef],
    ]) {
      expect(table).toContain(`data-object="${key}" data-integrity="verified"`);
      expect(table).toContain(`<a class="hash" href="/objects/${ref}"><code>${ref}</code></a>`);
    }
  });

  test("a large payload is cut with a link to the whole object, which /objects/ serves", async () => {
    const { body } = await runtime.get(`/invocations/${rows.hostile.invocationId}`);
    const raw = elementById(body, "raw");
    expect(raw).toMatch(/Showing 4,000 of [\d,]+ characters\./);
    const [link] = hrefs(raw);
    expect(link).toBe(`/objects/${rows.hostile.rawRef}`);
    const whole = await runtime.get(link ?? "");
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    const hex = rows.hostile.rawRef?.slice("sha256:".length);
    expect(whole.headers.get("content-disposition")).toBe(`inline; filename="${hex}.json"`);
    expect(whole.headers.get("x-sciencegate-integrity")).toBe("verified");
    expect(whole.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(whole.headers.get("x-content-type-options")).toBe("nosniff");
    const stored = Buffer.from(await runtime.governance.store.get(rows.hostile.rawRef ?? "")).toString(
      "utf8",
    );
    expect(whole.body).toBe(JSON.stringify(JSON.parse(stored), null, 2));
    expect(whole.body.length).toBeGreaterThan(4_000);
  });

  test("/objects/ takes only sha256:<64 lowercase hex>; an unknown one is 404", async () => {
    for (const bad of [
      "sha256:xyz",
      `sha256:${"A".repeat(64)}`,
      `${"a".repeat(64)}`,
      "..%2F..%2Fledger.sqlite",
      `sha256:${"a".repeat(64)}%2F..`,
    ]) {
      const answer = await runtime.get(`/objects/${bad}`);
      expect(answer.status, bad).toBe(400);
      expect(answer.body).toContain("sha256:&lt;64 lowercase hex&gt;");
    }
    expect((await runtime.get(`/objects/sha256:${"0".repeat(64)}`)).status).toBe(404);
  });

  test(`/objects/ serves at most ${OBJECT_SERVE_LIMIT} bytes and says so`, async () => {
    const { ref } = await runtime.governance.store.put(Buffer.alloc(OBJECT_SERVE_LIMIT + 10, "x"));
    const answer = await runtime.get(`/objects/${ref}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-disposition")).toMatch(/filename="[0-9a-f]{64}\.txt"/);
    expect(answer.body.startsWith("x".repeat(1000))).toBe(true);
    expect(answer.body).toMatch(
      /\[Cut at 32\.0 MiB of 32\.0 MiB: the console serves at most 33554432 bytes of an object\.\]\n$/,
    );
    expect(answer.body.length).toBeLessThan(OBJECT_SERVE_LIMIT + 200);
  });

  test("an unknown invocation is 404", async () => {
    const { status, body } = await runtime.get("/invocations/no-such-call");
    expect(status).toBe(404);
    expect(body).toContain("No invocation &#39;no-such-call&#39; in the ledger.");
  });

  // Last: it damages the stored objects.
  test("an altered object shows MISMATCH (inline in the ledger and in the file CAS), a removed one missing", async () => {
    // The imatinib request is small: it lives in the ledger's objects table.
    const sha = rows.imatinib.requestRef?.slice("sha256:".length);
    const db = new Database(join(runtime.dataDir, "ledger.sqlite"));
    const stored = db.prepare("SELECT bytes FROM objects WHERE sha256 = ?").pluck().get(sha) as Buffer;
    // Same size (the table checks it), other bytes: the query the agent sent is rewritten.
    const forged = Buffer.from(stored.toString("utf8").replace('"imatinib"', '"forgedxx"'));
    const changed = db.prepare("UPDATE objects SET bytes = ? WHERE sha256 = ?").run(forged, sha);
    db.close();
    expect(changed.changes).toBe(1);
    let { body } = await runtime.get(`/invocations/${rows.imatinib.invocationId}`);
    expect(elementById(body, "object-table")).toContain('data-object="request" data-integrity="mismatch"');
    expect(elementById(body, "object-table")).toContain("MISMATCH");
    expect(elementById(body, "object-table")).toContain('data-object="normalized" data-integrity="verified"');
    expect(elementById(body, "request")).toContain("no longer hash to");
    expect(elementById(body, "request")).toContain("&quot;query&quot;: &quot;forgedxx&quot;");
    // The hostile raw response is large: it is a file of the CAS.
    const file = casFile(rows.hostile.rawRef ?? "");
    chmodSync(file, 0o644);
    writeFileSync(file, '{"records":[]}');
    rmSync(casFile(rows.hostile.normalizedRef ?? ""));
    ({ body } = await runtime.get(`/invocations/${rows.hostile.invocationId}`));
    const table = elementById(body, "object-table");
    expect(table).toContain('data-object="raw" data-integrity="mismatch"');
    expect(table).toContain('data-object="normalized" data-integrity="missing"');
    expect(table).toContain('data-object="request" data-integrity="verified"');
    expect(elementById(body, "result")).toContain("is not in the store");
    const served = await runtime.get(`/objects/${rows.hostile.rawRef}`);
    expect(served.headers.get("x-sciencegate-integrity")).toBe("mismatch");
    expect((await runtime.get(`/objects/${rows.hostile.normalizedRef}`)).status).toBe(404);
  });
});
