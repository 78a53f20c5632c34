/**
 * The same audit record gives the same research object from either backend: a session recorded by a
 * SQLite-backed runtime is copied row by row (small objects with their rows, large ones in the shared
 * file CAS) into an embedded PostgreSQL, and a PostgreSQL-backed runtime over it exports a crate
 * byte-identical to the SQLite runtime's, which verifies.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, expect, test } from "vitest";
import { z } from "zod";
import { sha256Hex } from "../../src/core/canonical-json.js";
import type { ContentObject } from "../../src/governance/audit/content-object.js";
import {
  exportResearchObject,
  researchObjectZip,
  verifyResearchObject,
  writeResearchObject,
} from "../../src/research-object/index.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import { mergeGovernanceOptions } from "../../src/runtime/index.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { demoResult } from "../governance/broker/broker-harness.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";
import { schemaUrls } from "../postgres/fresh-schema.js";
import { openTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";

let server: TestPostgres;
let url: string;
const scratch = await mkdtemp(join(tmpdir(), "sciencegate-ro-pg-"));
const manifests = join(scratch, "manifests");
const dataDir = join(scratch, "data");
const SESSION = "thread-1";
const ANSWER = "- Record brca1 was found [demo:brca1].\n- A long record came back [demo:big1].\n";

beforeAll(async () => {
  server = await openTestPostgres();
  url = await schemaUrls(await server.createDatabase()).next();
  await mkdir(manifests, { recursive: true });
  const schema = { type: "object" as const, properties: { query: { type: "string" } }, required: ["query"] };
  await writeFile(
    join(manifests, "demo.json"),
    JSON.stringify(
      makeSource({
        tools: [
          makeTool({ id: "search", inputSchema: schema }),
          makeTool({ id: "big", inputSchema: schema }),
        ],
      }),
    ),
  );
}, 90_000);
afterAll(async () => {
  await server?.stop();
  await rm(scratch, { recursive: true, force: true });
}, 60_000);

/** An in-memory MCP server: `search` answers one small record, `big` one past the 64 KiB inline limit. */
function demoServer(): McpServer {
  const mcp = new McpServer({ name: "demo", version: "1.0.0" });
  const answer = (result: unknown) => ({
    content: [{ type: "text" as const, text: JSON.stringify(result) }],
    structuredContent: result as Record<string, unknown>,
  });
  mcp.registerTool("search", { inputSchema: { query: z.string() } }, async ({ query }) =>
    answer(demoResult("search", [query])),
  );
  mcp.registerTool("big", { inputSchema: { query: z.string() } }, async ({ query }) => {
    const result = demoResult("big", [query]);
    if (result.records[0]) result.records[0].abstract = "base editing ".repeat(8_000);
    return answer(result);
  });
  return mcp;
}

const runtime = (options: Parameters<typeof createGovernance>[0]): Promise<Governance> =>
  createGovernance(
    mergeGovernanceOptions(
      {
        config: { servers: [] },
        manifests: { builtin: false, dirs: [manifests] },
        mcp: { pool: createInMemoryPool({ demo: demoServer }) },
        storage: { dataDir },
        env: {},
        clock: new ManualClock(Date.parse("2026-12-03T09:00:00Z")),
      },
      options,
    ),
  );

test("a session exported from PostgreSQL is byte-identical to the same session exported from SQLite", {
  timeout: 120_000,
}, async () => {
  const sqlite = await runtime({});
  const clock = new ManualClock(Date.parse("2026-12-03T12:00:00Z"));
  let postgres: Governance | undefined;
  try {
    const call = (toolId: string, query: string, toolCallId: string) =>
      sqlite.broker.invoke({
        sourceId: "demo",
        toolId,
        input: { query },
        sessionId: SESSION,
        threadId: SESSION,
        toolCallId,
      });
    await call("search", "brca1", "c1");
    await call("search", "brca1", "c2"); // a cache hit
    await call("big", "big1", "c3");
    await call("search", "", "c4").catch(() => undefined); // an answer the envelope refuses
    await sqlite.broker
      .invoke({ sourceId: "demo", toolId: "search", input: { nope: 1 }, sessionId: SESSION })
      .catch(() => undefined);
    const rows = await sqlite.ledger.query({ sessionId: SESSION });
    expect(rows.map((r) => [r.toolId, r.status, r.cacheHit])).toEqual([
      ["search", "ok", false],
      ["search", "ok", true],
      ["big", "ok", false],
      ["search", "error", false],
      ["search", "error", false],
    ]);

    // A PostgreSQL deployment holding the same record: authorizations, then each row with the objects
    // SQLite kept inline (the large one stays in the file CAS both runtimes share).
    postgres = await runtime({ storage: { postgres: url } });
    expect(postgres.ledger.constructor.name).toBe("PostgresLedger");
    for (const auth of await sqlite.ledger.listAuthorizations())
      await postgres.ledgerWriter.appendAuthorization(auth);
    let inCas = 0;
    for (const row of await sqlite.ledger.query()) {
      const objects: ContentObject[] = [];
      for (const ref of [row.requestRef, row.rawRef, row.normalizedRef]) {
        const sha256 = ref?.slice("sha256:".length);
        const bytes = sha256 ? await sqlite.ledger.objects?.get(sha256) : undefined;
        if (ref && sha256 && bytes) objects.push({ ref, sha256, size: bytes.byteLength, bytes });
        else if (ref) inCas++;
      }
      await postgres.ledgerWriter.append(row, [...new Map(objects.map((o) => [o.ref, o])).values()]);
    }
    expect(inCas).toBeGreaterThan(0);

    const fromSqlite = await exportResearchObject({
      governance: sqlite,
      sessionId: SESSION,
      answer: ANSWER,
      clock,
    });
    const fromPostgres = await exportResearchObject({
      governance: postgres,
      sessionId: SESSION,
      answer: ANSWER,
      clock,
    });
    expect(fromPostgres.summary).toEqual(fromSqlite.summary);
    expect(fromSqlite.summary).toMatchObject({ invocations: 5, facts: 2, acceptedFacts: 2 });
    expect(JSON.stringify(fromPostgres.metadata)).toBe(JSON.stringify(fromSqlite.metadata));
    expect(sha256Hex(researchObjectZip(fromPostgres))).toBe(sha256Hex(researchObjectZip(fromSqlite)));

    const zip = join(scratch, "from-postgres.zip");
    await writeResearchObject(fromPostgres, zip);
    expect(await verifyResearchObject(zip)).toMatchObject({ ok: true, review: { facts: 2, accepted: 2 } });
  } finally {
    await postgres?.close();
    await sqlite.close();
  }
});
