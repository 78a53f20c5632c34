/**
 * Broker-level faults of the reliability suite (issue 10, item 3), part 2: oversized and malformed
 * responses, forged result identities, record and candidate URLs off the manifest's hosts.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect } from "vitest";
import { demoResult } from "../governance/broker/broker-harness.js";
import { call, codeOf, ok, rig, type Settled, settle } from "./broker-faults-rig.js";
import { faultTest, printFaultSummary } from "./fault-report.js";

printFaultSummary(
  "Broker faults: responses, identities and hosts (test/reliability/broker-faults-responses.test.ts)",
);

/** One response a misbehaving server sends, and what the broker must make of it. */
interface ResponseCase {
  name: string;
  response: () => CallToolResult;
  /** "ok" or the error code. */
  expect: string;
  check?: (settled: Settled) => void;
}

/** Sends each case's response through one tool and checks the outcome and its ledger row. */
async function runResponseCases(cases: ResponseCase[], maxResponseBytes = 1_000_000): Promise<string> {
  let next: () => CallToolResult = () => ok({});
  const r = await rig({ reply: () => next() }, { maxResponseBytes });
  const outcomes: string[] = [];
  for (const item of cases) {
    next = item.response;
    const settled = await settle(r.broker.invoke(call("reply", item.name)));
    expect(`${item.name}: ${codeOf(settled)}`).toBe(`${item.name}: ${item.expect}`);
    item.check?.(settled);
    outcomes.push(codeOf(settled));
  }
  const rows = await r.ledger.query();
  expect(rows.map((row) => row.error?.code ?? "ok")).toEqual(outcomes);
  const tally = new Map<string, number>();
  for (const code of outcomes) tally.set(code, (tally.get(code) ?? 0) + 1);
  return `${cases.length} responses, ${rows.length} ledger rows, 0 crashes: ${[...tally].map(([c, n]) => `${c}×${n}`).join(" ")}`;
}

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });
const structured = (value: Record<string, unknown>): CallToolResult => ({
  content: [{ type: "text", text: "see structuredContent" }],
  structuredContent: value,
});
const withRecords = (records: unknown[], extra: Record<string, unknown> = {}) =>
  structured({ ...demoResult("reply", []), records, ...extra });
const goodRecord = (id: string) => demoResult("reply", [id]).records[0] as unknown as Record<string, unknown>;
const resultOf = (settled: Settled) => ("ok" in settled ? settled.ok.result : undefined);

/** An object nested `depth` levels deep: {d: {d: ... {leaf: true}}}. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < depth; i++) value = { d: value };
  return value;
}

describe("oversized and malformed responses", () => {
  faultTest("oversized responses", "text, structuredContent and base64 image over a 1 MB cap", () =>
    runResponseCases([
      { name: "big-text", response: () => text("x".repeat(1_100_000)), expect: "RESPONSE_TOO_LARGE" },
      {
        name: "big-structured",
        response: () => withRecords([goodRecord("a")], { data: { blob: "y".repeat(1_100_000) } }),
        expect: "RESPONSE_TOO_LARGE",
      },
      {
        name: "big-image",
        response: () => ({
          content: [{ type: "image", data: "A".repeat(1_100_000), mimeType: "image/png" }],
        }),
        expect: "RESPONSE_TOO_LARGE",
      },
      {
        name: "multibyte-over-cap",
        // 400,000 three-byte characters: under the cap in characters, over it in UTF-8 bytes.
        response: () => text("€".repeat(400_000)),
        expect: "RESPONSE_TOO_LARGE",
      },
    ]),
  );

  faultTest(
    "malformed responses",
    "non-JSON and truncated text, envelope and record schema violations, wrong types",
    () =>
      runResponseCases([
        {
          name: "html-error-page",
          response: () => text("<html><body>502 Bad Gateway</body></html>"),
          // Documented: text that is not a structured result is third-party data, with no records.
          expect: "ok",
          check: (s) =>
            expect(resultOf(s)).toMatchObject({ records: [], data: { content: [{ type: "text" }] } }),
        },
        {
          name: "truncated-json",
          response: () => text('{"records":[{"identifier":"a","title":'),
          expect: "ok",
          check: (s) => expect(resultOf(s)?.records).toEqual([]),
        },
        { name: "records-not-array", response: () => structured({ records: "many" }), expect: "ok" },
        {
          name: "warnings-wrong-type",
          response: () => withRecords([goodRecord("a")], { warnings: "x" }),
          expect: "NORMALIZATION_FAILED",
        },
        {
          name: "data-is-array",
          response: () => withRecords([], { data: [1, 2] }),
          expect: "NORMALIZATION_FAILED",
        },
        {
          name: "missing-fields",
          response: () => withRecords([{ identifier: "a" }, { title: "b" }]),
          expect: "NORMALIZATION_FAILED",
          check: (s) => {
            const issues = ("error" in s ? s.error.data?.issues : undefined) as
              | { path: string }[]
              | undefined;
            expect(issues?.map((i) => i.path)).toEqual(
              expect.arrayContaining(["records.0.url", "records.1.identifier"]),
            );
          },
        },
        {
          name: "wrong-types",
          response: () =>
            withRecords([{ ...goodRecord("a"), year: "2020", authors: "Doe", fullTextRetrieved: "no" }]),
          expect: "NORMALIZATION_FAILED",
        },
        {
          name: "record-is-null",
          response: () => withRecords([null, 7, "x"]),
          expect: "NORMALIZATION_FAILED",
        },
        {
          name: "one-bad-one-good",
          response: () =>
            withRecords([goodRecord("good"), { ...goodRecord("bad"), contentScope: "everything" }]),
          expect: "ok",
          check: (s) => {
            expect(resultOf(s)?.records.map((rec) => rec.identifier)).toEqual(["good"]);
            expect(resultOf(s)?.warnings.join(" ")).toContain("Dropped record bad");
          },
        },
        {
          name: "third-party-error-text",
          response: () => ({
            isError: true,
            content: [{ type: "text", text: "Traceback (most recent call last): ..." }],
          }),
          // isError without a Sciencegate error: the tool reported its own failure (final, no retry).
          expect: "TOOL_FAILED",
        },
        {
          name: "malformed-structured-error",
          response: () => ({
            isError: true,
            content: [],
            structuredContent: { error: { code: "teapot", status: "x" } },
          }),
          expect: "TOOL_FAILED",
        },
      ]),
  );

  faultTest(
    "huge and deep responses",
    "10,000 records; structuredData nested 1,000 and 100,000 deep (structured and text)",
    () =>
      runResponseCases(
        [
          {
            name: "10k-records",
            response: () => withRecords(Array.from({ length: 10_000 }, (_, i) => goodRecord(`r${i}`))),
            expect: "ok",
            check: (s) => expect(resultOf(s)?.records).toHaveLength(10_000),
          },
          {
            name: "nested-1000",
            response: () => withRecords([{ ...goodRecord("n"), structuredData: nested(1_000) }]),
            expect: "ok",
            check: (s) =>
              expect(JSON.stringify(resultOf(s)?.records[0]?.structuredData)).toContain('"leaf":true'),
          },
          {
            name: "nested-100000",
            response: () => withRecords([{ ...goodRecord("n"), structuredData: nested(100_000) }]),
            expect: "NORMALIZATION_FAILED",
          },
          {
            name: "nested-100000-as-text",
            // Written by hand: JSON.stringify itself cannot produce it, a server in another language can.
            response: () =>
              text(
                `{"records":[${JSON.stringify(goodRecord("t")).slice(0, -1)},"structuredData":${'{"d":'.repeat(100_000)}1${"}".repeat(100_000)}}]}`,
              ),
            expect: "NORMALIZATION_FAILED",
          },
        ],
        20_000_000,
      ),
  );
});

/** Record URL forgeries: each must cost its record (HTTPS on a `networkHosts` host only). */
const FORGED_RECORDS: [string, (rec: Record<string, unknown>) => void][] = [
  ["foreign-host", (rec) => (rec.url = "https://evil.example.net/r/1")],
  ["http", (rec) => (rec.url = "http://example.org/r/1")],
  ["subdomain", (rec) => (rec.url = "https://evil.example.org/r/1")],
  ["lookalike", (rec) => (rec.url = "https://example.org.evil.net/r/1")],
  ["userinfo-host", (rec) => (rec.url = "https://example.org@evil.example.net/r/1")],
  ["credentials", (rec) => (rec.url = "https://user:pw@example.org/r/1")],
  ["port", (rec) => (rec.url = "https://example.org:8443/r/1")],
  ["homograph", (rec) => (rec.url = "https://ex\u0430mple.org/r/1")],
  ["javascript", (rec) => (rec.url = "javascript:alert(1)")],
  ["data-url", (rec) => (rec.url = "data:text/html,<script>x</script>")],
  ["relative", (rec) => (rec.url = "/r/1")],
  ["primary-citation", (rec) => (rec.primaryCitation = { label: "x", url: "https://evil.example.net/c" })],
  ["citation-http", (rec) => (rec.citations = [{ label: "x", url: "http://example.org/c" }])],
  ["other-source", (rec) => (rec.source = "pubmed")],
];

const candidate = (candidateId: string, extra: Record<string, unknown> = {}) => ({
  candidateId,
  sourceId: "demo",
  sourceRecordId: "good",
  url: `https://example.org/files/${candidateId}.pdf`,
  format: "pdf",
  kind: "paper",
  ...extra,
});

describe("forged identities and hosts", () => {
  faultTest(
    "forged result identity",
    "results claiming another sourceId or toolId (structured and text)",
    () =>
      runResponseCases([
        {
          name: "other-source",
          response: () => withRecords([goodRecord("a")], { sourceId: "pubmed" }),
          expect: "NORMALIZATION_FAILED",
        },
        {
          name: "other-tool",
          response: () => withRecords([goodRecord("a")], { toolId: "download" }),
          expect: "NORMALIZATION_FAILED",
        },
        {
          name: "non-string-source",
          response: () => withRecords([goodRecord("a")], { sourceId: 42 }),
          expect: "NORMALIZATION_FAILED",
        },
        {
          name: "forged-in-text",
          response: () => text(JSON.stringify({ ...demoResult("reply", ["a"]), sourceId: "pubmed" })),
          expect: "NORMALIZATION_FAILED",
        },
        {
          name: "no-identity",
          // A result that names no identity gets the call's identity and the manifest's licence.
          response: () => structured({ records: [goodRecord("a")] }),
          expect: "ok",
          check: (s) =>
            expect(resultOf(s)).toMatchObject({ sourceId: "demo", toolId: "reply", license: "CC0-1.0" }),
        },
      ]),
  );

  faultTest(
    "forged hosts",
    `${FORGED_RECORDS.length} forged record URLs, a bad cross-reference, 4 forged candidates, beside 1 good record and candidate`,
    async () => {
      const records = FORGED_RECORDS.map(([name, forge]) => {
        const rec = goodRecord(name);
        forge(rec);
        return rec;
      });
      const xref = {
        ...goodRecord("xref"),
        crossReferences: [{ identifier: "P1", identifierType: "uniprot", url: "http://evil.example.net/P1" }],
      };
      const artifacts = [
        candidate("c-good"),
        candidate("c-other-source", { sourceId: "pubmed" }),
        candidate("c-http", { url: "http://example.org/files/x.pdf" }),
        candidate("c-foreign", { url: "https://evil.example.net/x.pdf" }),
        candidate("c-userinfo", { url: "https://example.org@evil.example.net/x.pdf" }),
      ];
      const r = await rig({
        reply: () => withRecords([goodRecord("good"), ...records, xref], { artifacts }),
      });
      const outcome = await r.broker.invoke(call("reply", "x"));
      const { result } = outcome;
      expect(result.records.map((rec) => rec.identifier)).toEqual(["good", "xref"]);
      expect(result.records[1]?.crossReferences).toEqual([{ identifier: "P1", identifierType: "uniprot" }]);
      expect(result.artifacts?.map((a) => a.candidateId)).toEqual(["c-good"]);
      const warnings = result.warnings.join("\n");
      for (const [name] of FORGED_RECORDS) expect(warnings).toContain(`Dropped record ${name}:`);
      for (const a of artifacts.slice(1)) expect(warnings).toContain(`Dropped candidate ${a.candidateId}:`);
      // What a later artifact_download re-reads is the checked copy in the CAS, not the server's.
      const row = await r.ledger.get(outcome.invocationId);
      expect(await r.store.getJson(row?.normalizedRef as string)).toEqual(result);
      const raw = JSON.stringify(await r.store.getJson(row?.rawRef as string));
      expect(raw).toContain("evil.example.net");
      return `records kept 2/${records.length + 2} (${FORGED_RECORDS.length} forged dropped), candidates kept 1/5, xref URL removed, warnings=${result.warnings.length}, CAS normalized copy clean`;
    },
  );
});
