/**
 * What the ledger's batch statement costs PostgreSQL to plan, against running it: `EXPLAIN ANALYZE` of one
 * batch (an authorization and an invocation with two objects) on a throwaway embedded server, then its round
 * trip as the driver sees it, unnamed (parsed and planned each time) and named (prepared once on the
 * connection), in alternating blocks. Usage: `npx tsx bench/postgres-plan.ts`.
 */
import { createHash, randomUUID } from "node:crypto";
import pg from "pg";
import { openPostgres } from "../src/core/index.js";
import { PostgresLedger } from "../src/governance/audit/index.js";
import { insertBatchStatement } from "../src/governance/audit/postgres-ledger-sql.js";
import { startEmbeddedPostgres } from "../test/postgres/test-postgres.js";

const started = await startEmbeddedPostgres();
const url = started.adminUrl;
const db = await openPostgres(url);
const ledger = await PostgresLedger.open(db);
await ledger.close();
await db.close();
const client = new pg.Client({ connectionString: url });
await client.connect();
const obj = (text: string) => {
  const bytes = Buffer.from(text);
  return { sha256: createHash("sha256").update(bytes).digest("hex"), bytes };
};
const writes = () => {
  const id = randomUUID();
  const a = randomUUID();
  const o1 = obj(`{"q":"${id}"}`);
  const o2 = obj(`{"r":"${"x".repeat(2000)}${id}"}`);
  return [
    {
      kind: "authorization",
      record: {
        id: a,
        sessionId: "s",
        sourceId: "src",
        toolId: "t",
        action: "call",
        resource: "r",
        decisionSource: "policy_not_dangerous",
        createdAt: new Date().toISOString(),
        epoch: 1,
      },
    },
    {
      kind: "invocation",
      record: {
        invocationId: id,
        sessionId: "s",
        sourceId: "src",
        toolId: "t",
        status: "ok",
        startedAt: new Date().toISOString(),
        finishedAt: new Date().toISOString(),
        durationMs: 1,
        attempts: 1,
        cacheHit: false,
        queueWaitMs: 0,
        authorizationId: a,
        requestRef: `sha256:${o1.sha256}`,
        resultRef: `sha256:${o2.sha256}`,
      },
      objects: [o1, o2],
    },
  ] as never;
};
const { sql, params } = insertBatchStatement(writes());
const explain = await client.query(`EXPLAIN (ANALYZE, SUMMARY ON, FORMAT JSON) ${sql}`, params as never);
const plan = (explain.rows[0] as { "QUERY PLAN": Array<Record<string, number>> })["QUERY PLAN"][0];
console.log("planning ms", plan?.["Planning Time"], "execution ms", plan?.["Execution Time"]);
const time = async (named: boolean) => {
  const s = insertBatchStatement(writes());
  const t = process.hrtime.bigint();
  await client.query(
    named
      ? { name: "probe_batch", text: s.sql, values: s.params as never }
      : { text: s.sql, values: s.params as never },
  );
  return Number(process.hrtime.bigint() - t) / 1e6;
};
for (let i = 0; i < 50; i++) {
  await time(false);
  await time(true);
}
const un: number[] = [],
  na: number[] = [];
for (let b = 0; b < 10; b++) {
  for (let i = 0; i < 50; i++) un.push(await time(false));
  for (let i = 0; i < 50; i++) na.push(await time(true));
}
const p50 = (x: number[]) => [...x].sort((a, b) => a - b)[Math.floor(x.length / 2)];
console.log("unnamed p50", p50(un)?.toFixed(3), "named p50", p50(na)?.toFixed(3));
await client.end();
await started.stop();
