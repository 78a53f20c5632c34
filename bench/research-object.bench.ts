/**
 * Research object benchmark: a session of 1,000 governed calls, made through the runtime
 * `createGovernance` returns (SQLite ledger, file CAS, an in-memory MCP server), exported as an
 * RO-Crate with an answer of 50 cited facts, written as a zip, and verified from the zip alone. Each
 * step runs side by side with a baseline that does only the raw work (export: read every row and
 * object and write them out as files; verify: read and SHA-256 every file of the crate), in
 * alternating rounds, wall time and CPU per step. `BENCH_QUICK=1` runs 200 calls.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { sha256Hex } from "../src/core/index.js";
import {
  exportResearchObject,
  openResearchObject,
  researchObjectZip,
  verifyResearchObject,
  writeResearchObject,
} from "../src/research-object/index.js";
import { createGovernance, type Governance } from "../src/runtime/index.js";
import { createInMemoryPool } from "../src/testing/index.js";
import { demoResult } from "../test/governance/broker/broker-harness.js";
import { makeSource, makeTool } from "../test/governance/manifests/manifest-factory.js";
import { type BenchMetric, type BenchResult, ratioOf } from "./lib/bench-result.js";

const QUICK = process.env.BENCH_QUICK === "1";
const CALLS = QUICK ? 200 : 1_000;
const ROUNDS = QUICK ? 2 : 3;
const FACTS = 50;
const SESSION = "bench-session";

interface Timed {
  wallMs: number;
  cpuMs: number;
}

async function timed(run: () => Promise<unknown>): Promise<Timed> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await run();
  const used = process.cpuUsage(cpu);
  return { wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** The session: `CALLS` searches (one in ten repeats an earlier query: a cache hit) in one thread. */
async function recordSession(dir: string): Promise<{ governance: Governance; answer: string }> {
  const manifests = join(dir, "manifests");
  await mkdir(manifests, { recursive: true });
  await writeFile(
    join(manifests, "demo.json"),
    JSON.stringify(makeSource({ tools: [makeTool({ id: "search" })] })),
  );
  const server = () => {
    const mcp = new McpServer({ name: "demo", version: "1.0.0" });
    mcp.registerTool(
      "search",
      { inputSchema: { query: z.string(), limit: z.number().int().optional() } },
      async ({ query }) => {
        const result = demoResult("search", [query, `${query}b`, `${query}c`]);
        for (const record of result.records)
          record.abstract = `Abstract of ${record.identifier}. `.repeat(20);
        return {
          content: [{ type: "text" as const, text: JSON.stringify(result) }],
          structuredContent: result as never,
        };
      },
    );
    return mcp;
  };
  const governance = await createGovernance({
    config: { servers: [] },
    manifests: { builtin: false, dirs: [manifests] },
    mcp: { pool: createInMemoryPool({ demo: server }) },
    storage: { dataDir: join(dir, "data") },
    env: {},
    onWarning: () => undefined,
  });
  for (let i = 0; i < CALLS; i++) {
    const query = `q${i % 10 === 9 ? i - 1 : i}`;
    await governance.broker.invoke({
      sourceId: "demo",
      toolId: "search",
      input: { query },
      sessionId: SESSION,
      threadId: SESSION,
      toolCallId: `call-${i}`,
    });
  }
  const answer = Array.from({ length: FACTS }, (_, i) => `- Fact ${i} is backed [demo:q${i * 10}].`).join(
    "\n",
  );
  return { governance, answer };
}

/** The export's raw work alone: every row and every object it names, read and written as files. */
async function copyRaw(governance: Governance, out: string): Promise<void> {
  await mkdir(out, { recursive: true });
  const rows = await governance.ledger.query({ sessionId: SESSION });
  await writeFile(join(out, "rows.json"), JSON.stringify(rows));
  for (const row of rows) {
    for (const ref of [row.requestRef, row.rawRef, row.normalizedRef]) {
      if (ref) await writeFile(join(out, `${ref.slice(7)}.json`), await governance.store.get(ref));
    }
  }
}

/** The verifier's raw work alone: every file of the crate read and hashed. */
async function hashAll(zip: string): Promise<void> {
  const crate = await openResearchObject(zip);
  for (const path of crate.paths) sha256Hex((await crate.read(path)) as Uint8Array);
}

export async function run(): Promise<BenchResult> {
  const dir = await mkdtemp(join(tmpdir(), "sciencegate-bench-ro-"));
  const { governance, answer } = await recordSession(dir);
  try {
    const samples = {
      export: [] as Timed[],
      copy: [] as Timed[],
      verify: [] as Timed[],
      hash: [] as Timed[],
    };
    let zipBytes = 0;
    let metadataBytes = 0;
    let entities = 0;
    let accepted = "";
    const zip = join(dir, "crate.zip");
    for (let round = 0; round < ROUNDS; round++) {
      samples.copy.push(await timed(() => copyRaw(governance, join(dir, `copy-${round}`))));
      samples.export.push(
        await timed(async () => {
          const crate = await exportResearchObject({ governance, sessionId: SESSION, answer });
          await rm(zip, { force: true });
          await writeResearchObject(crate, zip);
          zipBytes = researchObjectZip(crate).byteLength;
          metadataBytes = JSON.stringify(crate.metadata, null, 2).length;
          entities = crate.metadata["@graph"].length;
          accepted = `${crate.summary.acceptedFacts}/${crate.summary.facts}`;
        }),
      );
      samples.hash.push(await timed(() => hashAll(zip)));
      samples.verify.push(
        await timed(async () => {
          const report = await verifyResearchObject(zip);
          if (!report.ok) throw new Error(`The crate did not verify: ${report.problems[0]?.message}`);
        }),
      );
    }
    const m = (key: keyof typeof samples, field: keyof Timed) => median(samples[key].map((s) => s[field]));
    const metrics: BenchMetric[] = [
      { name: "export + write zip, wall", value: m("export", "wallMs"), unit: "ms" },
      { name: "export + write zip, CPU", value: m("export", "cpuMs"), unit: "ms" },
      { name: "verify from the zip, wall", value: m("verify", "wallMs"), unit: "ms" },
      { name: "verify from the zip, CPU", value: m("verify", "cpuMs"), unit: "ms" },
      { name: "zip size", value: zipBytes, unit: "bytes" },
      { name: "metadata size", value: metadataBytes, unit: "bytes" },
      { name: "entities", value: entities, unit: "entities" },
    ];
    return {
      name: "research-object",
      description: `A session of ${CALLS} governed calls and a ${FACTS}-fact answer: export to a zip and verify it`,
      parameters: { calls: CALLS, facts: FACTS, rounds: ROUNDS },
      metrics,
      ratios: [
        ratioOf(
          "export wall: crate / raw copy of rows and objects",
          m("export", "wallMs"),
          m("copy", "wallMs"),
          "ms",
        ),
        ratioOf("export CPU: crate / raw copy", m("export", "cpuMs"), m("copy", "cpuMs"), "ms"),
        ratioOf(
          "verify wall: verify-crate / re-hash every file",
          m("verify", "wallMs"),
          m("hash", "wallMs"),
          "ms",
        ),
        ratioOf("verify CPU: verify-crate / re-hash", m("verify", "cpuMs"), m("hash", "cpuMs"), "ms"),
      ],
      notes: [
        `facts accepted from the crate: ${accepted}`,
        "export includes the claim review over the crate's own rows and objects, the preview and the zip",
        "verify includes re-hashing, reference checks, reading every call back and re-running the review",
      ],
    };
  } finally {
    await governance.close();
    await rm(dir, { recursive: true, force: true });
  }
}
