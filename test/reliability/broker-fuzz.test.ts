/**
 * Property-based faults of the reliability suite (issue 10, item 3): fuzzed tool arguments and fuzzed
 * tool results through the real Broker and MCP SDK. The broker must never throw anything but a
 * GovernanceError, must answer every call with a result or a structured error, and must write one
 * ledger row per call. Seeded, so a failure reproduces; fast-check prints the counterexample.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { hashCanonical } from "../../src/core/canonical-json.js";
import { demoResult } from "../governance/broker/broker-harness.js";
import { call, codeOf, ok, rig, settle, type ToolSpec } from "./broker-faults-rig.js";
import { faultTest, printFaultSummary } from "./fault-report.js";

printFaultSummary("Broker fuzzing (test/reliability/broker-fuzz.test.ts)");

const SEED = 20_260_101;
const RUNS = 300;

/** A tool schema with the usual traps: required, bounds, enums, nesting, no extra properties. */
const LOOKUP_SCHEMA = {
  type: "object" as const,
  properties: {
    query: { type: "string", minLength: 1, maxLength: 200 },
    limit: { type: "integer", minimum: 1, maximum: 100 },
    fields: {
      type: "array",
      items: { type: "string", enum: ["title", "abstract", "authors"] },
      maxItems: 3,
      uniqueItems: true,
    },
    filters: {
      type: "object",
      properties: { year: { type: "integer" }, openAccess: { type: "boolean" } },
      additionalProperties: false,
    },
  },
  required: ["query"],
  additionalProperties: false,
};

/** The lookup tool: echoes the arguments it received, so a test can compare them with the call's. */
function lookupTool(received: Record<string, unknown>[]): ToolSpec {
  return {
    inputSchema: LOOKUP_SCHEMA,
    serverShape: {
      query: z.string(),
      limit: z.number().int().optional(),
      fields: z.array(z.string()).optional(),
      filters: z.object({ year: z.number().int().optional(), openAccess: z.boolean().optional() }).optional(),
    },
    handler: (args) => {
      received.push(args);
      return ok(demoResult("lookup", ["r1"]));
    },
  };
}

const PROTO_KEYS = ["__proto__", "constructor", "prototype", "toString", "valueOf", "hasOwnProperty"];
/** Any UTF-16 code unit: control characters, lone surrogates, bidi overrides. */
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
const nastyString = fc.oneof(
  fc.string({ unit: anyUnit, maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.integer({ min: 10_000, max: 20_000 }).map((n) => "\u0000\u202e\ud800".repeat(n / 3)),
);
const key = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom(...PROTO_KEYS, ...Object.keys(LOOKUP_SCHEMA.properties)),
);
const anything = fc.anything({
  key,
  maxDepth: 4,
  values: [nastyString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null)],
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withSparseArray: true,
  withTypedArray: true,
});
/** Mostly argument-shaped objects whose fields are wrong in every way, plus anything at all. */
const fuzzedInput = fc.oneof(
  anything,
  fc.jsonValue(),
  fc.record(
    {
      query: fc.oneof(nastyString, anything),
      limit: fc.oneof(fc.integer({ min: -5, max: 200 }), fc.double(), fc.constant("")),
      fields: fc.oneof(fc.array(fc.constantFrom("title", "abstract", "authors", "x")), anything),
      filters: fc.oneof(
        fc.record({ year: fc.oneof(fc.integer(), anything) }, { requiredKeys: [] }),
        anything,
      ),
    },
    { requiredKeys: [] },
  ),
  fc.dictionary(key, anything, { maxKeys: 4 }),
);

/** Arguments that satisfy the schema, with nasty but valid strings. */
const validInput = fc.record(
  {
    query: fc.string({ unit: anyUnit, minLength: 1, maxLength: 100 }),
    limit: fc.integer({ min: 1, max: 100 }),
    fields: fc.uniqueArray(fc.constantFrom("title", "abstract", "authors"), { maxLength: 3 }),
    filters: fc.record({ year: fc.integer(), openAccess: fc.boolean() }, { requiredKeys: [] }),
  },
  { requiredKeys: ["query"] },
);

/**
 * Hand-picked inputs: prototype keys as JSON parsing makes them (own properties, as in a model's
 * arguments), and sizes and shapes a generator rarely reaches.
 */
const EDGE_INPUTS: (() => unknown)[] = [
  () => JSON.parse('{"__proto__":{"query":"inherited"}}'),
  () => JSON.parse('{"query":"x","__proto__":{"polluted":"yes"}}'),
  () => JSON.parse('{"query":"x","constructor":{"prototype":{"polluted":"yes"}}}'),
  () => JSON.parse('{"query":"x","filters":{"__proto__":{"year":1999}}}'),
  () => ({ query: "x".repeat(1_000_000) }),
  () => ({ query: "x", ["k".repeat(100_000)]: 1 }),
  () => {
    const cyclic: Record<string, unknown> = { query: "x" };
    cyclic.self = cyclic;
    return cyclic;
  },
  () => {
    let deep: unknown = "x";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    return { query: "x", filters: deep };
  },
  () => ({ query: 10n }),
  () => () => "a function",
];

describe("fuzzed tool arguments", () => {
  faultTest(
    "fuzzed tool arguments",
    `${RUNS} arbitrary values (control chars, lone surrogates, 20k strings, prototype keys, BigInt, Map, null-prototype) + ${EDGE_INPUTS.length} edge inputs (JSON __proto__ keys, 1 MB strings, a cycle, 100k-deep arrays)`,
    async () => {
      const received: Record<string, unknown>[] = [];
      const r = await rig({ lookup: lookupTool(received) });
      const tally = new Map<string, number>();
      let calls = 0;
      const check = async (input: unknown) => {
        const before = received.length;
        const rowsBefore = (await r.ledger.summary()).calls;
        calls++;
        const settled = await settle(r.broker.invoke(call("lookup", input)));
        const code = codeOf(settled);
        tally.set(code, (tally.get(code) ?? 0) + 1);
        // Only a schema failure may end a call to this well-behaved server; it then reaches nothing.
        expect(code === "ok" || code === "INVALID_INPUT", code).toBe(true);
        expect(received.length).toBe(code === "ok" ? before + 1 : before);
        expect((await r.ledger.summary()).calls).toBe(rowsBefore + 1);
        if ("ok" in settled) {
          // The server got exactly the arguments the broker validated, hashed and audited.
          const row = await r.ledger.get(settled.ok.invocationId);
          expect(row?.inputHash).toBe(hashCanonical(received.at(-1)));
        }
        return code;
      };
      // Each edge input breaks the schema or is not JSON: refused before the server, and audited.
      for (const input of EDGE_INPUTS) expect(await check(input())).toBe("INVALID_INPUT");
      await fc.assert(
        fc.asyncProperty(fuzzedInput, async (input) => {
          await check(input);
        }),
        { seed: SEED, numRuns: RUNS },
      );
      await fc.assert(
        fc.asyncProperty(validInput, async (input) => {
          const before = received.length;
          await check(input);
          expect(received.length).toBe(before + 1);
          expect(received.at(-1)?.query).toBe(input.query);
        }),
        { seed: SEED, numRuns: 100 },
      );
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      return `${calls} calls, ${calls} ledger rows, 0 crashes: ${[...tally].map(([c, n]) => `${c}×${n}`).join(" ")}; Object.prototype clean`;
    },
  );
});

/** A record whose every field may be replaced by an arbitrary value. */
const fuzzedRecord = fc
  .record({
    field: fc.constantFrom(
      "identifier",
      "title",
      "url",
      "source",
      "citations",
      "primaryCitation",
      "contentScope",
      "year",
      "structuredData",
      "warnings",
    ),
    value: anything,
    keep: fc.boolean(),
  })
  .map(({ field, value, keep }) => {
    const rec: Record<string, unknown> = { ...demoResult("reply", ["r"]).records[0] };
    if (!keep)
      Object.defineProperty(rec, field, { value, enumerable: true, writable: true, configurable: true });
    return rec;
  });

/** What a misbehaving server may send back. */
const fuzzedResult: fc.Arbitrary<CallToolResult> = fc.oneof(
  fc.jsonValue().map((v) => ({ content: [{ type: "text" as const, text: JSON.stringify(v) ?? "null" }] })),
  fc.dictionary(key, fc.jsonValue(), { maxKeys: 6 }).map((v) => ({ content: [], structuredContent: v })),
  fc
    .record(
      {
        records: fc.array(fuzzedRecord, { maxLength: 4 }),
        warnings: fc.oneof(fc.array(fc.string()), anything),
        sourceId: fc.constantFrom("demo", "demo", "pubmed"),
        data: fc.oneof(fc.dictionary(key, fc.jsonValue()), anything),
      },
      { requiredKeys: ["records"] },
    )
    .map((v) => ({ content: [], structuredContent: v as Record<string, unknown> })),
  fc
    .record({ isError: fc.boolean(), content: anything, structuredContent: anything, _meta: anything })
    .map((v) => v as unknown as CallToolResult),
);

describe("fuzzed tool results", () => {
  faultTest(
    "fuzzed tool results",
    `${RUNS} arbitrary results: JSON text, structured objects, mutated records, invalid CallToolResults`,
    async () => {
      let next: CallToolResult = ok({});
      const r = await rig({ reply: () => next });
      const tally = new Map<string, number>();
      let calls = 0;
      await fc.assert(
        fc.asyncProperty(fuzzedResult, async (result) => {
          next = result;
          calls++;
          const settled = await settle(r.broker.invoke(call("reply", "x")));
          const code = codeOf(settled);
          tally.set(code, (tally.get(code) ?? 0) + 1);
          expect(code.startsWith("crash"), code).toBe(false);
          expect((await r.ledger.summary()).calls).toBe(calls);
          if ("ok" in settled) {
            const { result: out } = settled.ok;
            expect(out).toMatchObject({
              sourceId: "demo",
              toolId: "reply",
              untrusted: true,
              license: "CC0-1.0",
            });
            for (const rec of out.records) {
              expect(rec.source).toBe("demo");
              expect(rec.url.startsWith("https://example.org/")).toBe(true);
            }
          }
        }),
        { seed: SEED, numRuns: RUNS },
      );
      return `${calls} calls, ${calls} ledger rows, 0 crashes: ${[...tally].map(([c, n]) => `${c}×${n}`).join(" ")}`;
    },
  );
});

describe("prototype keys", () => {
  // Regression: canonical JSON once dropped an own "__proto__" key (`out[key] = ...` set the copy's
  // prototype), so two different inputs shared an input hash and cache key.
  test("an own __proto__ argument is kept in the audited request and changes the input hash", async () => {
    const r = await rig({ search: () => ok(demoResult("search", ["a"])) });
    const plain = await r.broker.invoke(call("search", { query: "x" }));
    const withProto = await r.broker.invoke(
      call("search", JSON.parse('{"query":"x","__proto__":{"admin":true}}')),
    );
    const [a, b] = await Promise.all([
      r.ledger.get(plain.invocationId),
      r.ledger.get(withProto.invocationId),
    ]);
    const stored = await r.store.getJson<{ input: object }>(b?.requestRef as string);
    expect(Object.hasOwn(stored.input, "__proto__")).toBe(true);
    expect(b?.inputHash).not.toBe(a?.inputHash);
  });
});
