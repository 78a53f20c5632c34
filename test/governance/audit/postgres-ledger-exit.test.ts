/**
 * A process that exits with rows still queued in the writer of a `PostgresLedger` (`process.exit()`
 * right after appending or invoking, no `close()`): the writer's exit step writes them through a
 * short-lived child process (`appendBatchNow`), each in a savepoint of its own.
 */
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { openPostgres } from "../../../src/core/open-postgres.js";
import { PostgresLedger } from "../../../src/governance/audit/postgres-ledger.js";
import { useTestSchemas } from "../../postgres/fresh-schema.js";

const schemas = useTestSchemas();
const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const module = (path: string) => JSON.stringify(pathToFileURL(join(repoRoot, path)).href);
/** A package as this repository resolves it (the script lives outside the repository). */
const pkg = (specifier: string) => JSON.stringify(import.meta.resolve(specifier));

/** Runs `body` as an ES module under tsx (with `url` defined) and returns its stderr. */
async function runScript(url: string, body: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "sciencegate-pg-exit-"));
  const script = join(dir, "exit.mts");
  await writeFile(script, `const url = ${JSON.stringify(url)};\n${body}`);
  const { stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", script], {
    cwd: repoRoot,
  });
  return stderr;
}

async function readBack(url: string) {
  const db = await openPostgres(url, { maxConnections: 2 });
  const ledger = await PostgresLedger.open(db);
  return {
    ledger,
    db,
    close: async () => {
      await ledger.close();
      await db.close();
    },
  };
}

describe("PostgresLedger at process exit", () => {
  test("rows appended and not awaited before process.exit() are committed, objects included", async () => {
    const url = await schemas.next();
    const stderr = await runScript(
      url,
      `import { openPostgres } from ${module("src/core/open-postgres.ts")};
import { LedgerWriter, PostgresLedger } from ${module("src/governance/audit/index.ts")};
import { jsonObject } from ${module("src/governance/audit/content-object.ts")};
import { ledgerRow } from ${module("test/governance/audit/ledger-row.ts")};
const db = await openPostgres(url);
const ledger = new LedgerWriter(await PostgresLedger.open(db));
for (let i = 0; i < 300; i++) {
  const object = jsonObject({ i, text: "x".repeat(2000) });
  void ledger.append(ledgerRow("inv-" + i, { normalizedRef: object.ref }), [object]).catch(() => {});
}
for (let i = 0; i < 10; i++) {
  void ledger.appendAuthorization({ id: "auth-" + i, sessionId: "s1", sourceId: "pubmed", toolId: "search",
    action: "pubmed:search", resource: "pubmed:search", decisionSource: "policy_not_dangerous",
    createdAt: "2025-01-01T00:00:00.000Z", epoch: i + 1 }).catch(() => {});
}
process.exit(0);
`,
    );
    expect(stderr).toBe("");
    const { ledger, close } = await readBack(url);
    try {
      const rows = await ledger.query({ limit: 1000 });
      expect(rows).toHaveLength(300);
      expect(await ledger.listAuthorizations()).toHaveLength(10);
      const last = rows.find((r) => r.invocationId === "inv-299");
      const bytes = await ledger.objects?.get((last?.normalizedRef ?? "").slice("sha256:".length));
      expect(JSON.parse(Buffer.from(bytes ?? []).toString("utf8"))).toMatchObject({ i: 299 });
    } finally {
      await close();
    }
  });

  test("a row with NUL characters queued at exit is committed, and reads back exactly", async () => {
    const url = await schemas.next();
    const stderr = await runScript(
      url,
      `import { openPostgres } from ${module("src/core/open-postgres.ts")};
import { LedgerWriter, PostgresLedger } from ${module("src/governance/audit/index.ts")};
import { ledgerRow } from ${module("test/governance/audit/ledger-row.ts")};
const db = await openPostgres(url);
const ledger = new LedgerWriter(await PostgresLedger.open(db));
for (let i = 0; i < 5; i++) void ledger.append(ledgerRow("ok-" + i)).catch(() => {});
// NUL characters, which PostgreSQL text and jsonb cannot hold as they are.
void ledger.append(ledgerRow("nul", { sessionId: "s\\u0000", status: "error",
  error: { code: "TOOL_FAILED", message: "m\\u0000", retryable: false, attempts: 1 } })).catch(() => {});
process.exit(0);
`,
    );
    expect(stderr).toBe("");
    const { ledger, close } = await readBack(url);
    try {
      expect((await ledger.query()).map((r) => r.invocationId).sort()).toEqual([
        "nul",
        "ok-0",
        "ok-1",
        "ok-2",
        "ok-3",
        "ok-4",
      ]);
      expect(await ledger.get("nul")).toMatchObject({ sessionId: "s\u0000", error: { message: "m\u0000" } });
    } finally {
      await close();
    }
  });

  test("createGovernance on PostgreSQL: calls invoked right before process.exit() keep their rows and authorizations", async () => {
    const url = await schemas.next();
    const stderr = await runScript(
      url,
      `import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from ${pkg("@modelcontextprotocol/sdk/server/mcp.js")};
import { z } from ${pkg("zod")};
import { createGovernance } from ${module("src/runtime/create-governance.ts")};
import { createInMemoryPool } from ${module("src/testing/in-memory-pool.ts")};
import { demoResult } from ${module("test/governance/broker/broker-harness.ts")};
import { makeSource, makeTool } from ${module("test/governance/manifests/manifest-factory.ts")};
const dir = mkdtempSync(join(tmpdir(), "sciencegate-exit-manifests-"));
writeFileSync(join(dir, "demo.json"), JSON.stringify(makeSource({ tools: [makeTool({ id: "search",
  inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } })] })));
const demo = () => {
  const mcp = new McpServer({ name: "demo", version: "1.0.0" });
  mcp.registerTool("search", { inputSchema: { query: z.string() } }, async ({ query }) => {
    const result = demoResult("search", [query]);
    return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
  });
  return mcp;
};
const governance = await createGovernance({ config: { servers: [] }, manifests: { builtin: false, dirs: [dir] },
  mcp: { pool: createInMemoryPool({ demo }) },
  storage: { dataDir: mkdtempSync(join(tmpdir(), "sciencegate-exit-data-")), postgres: url }, env: {} });
for (let i = 0; i < 20; i++) {
  await governance.broker.invoke({ sourceId: "demo", toolId: "search", input: { query: "q" + i }, sessionId: "s1" });
}
process.exit(0);
`,
    );
    expect(stderr).not.toContain("not committed");
    expect(stderr).not.toContain("not written");
    const { ledger, close } = await readBack(url);
    try {
      const rows = await ledger.query({ limit: 100 });
      expect(rows).toHaveLength(20);
      expect(rows.every((r) => r.status === "ok" && r.normalizedRef !== undefined)).toBe(true);
      const authorizations = await ledger.listAuthorizations();
      expect(authorizations).toHaveLength(20);
      expect(new Set(rows.map((r) => r.authorizationId))).toEqual(new Set(authorizations.map((a) => a.id)));
    } finally {
      await close();
    }
  });
});
