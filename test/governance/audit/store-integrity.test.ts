import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, test } from "vitest";
import { contentObject, jsonObject } from "../../../src/governance/audit/content-object.js";
import { FileContentStore, MemoryContentStore } from "../../../src/governance/audit/content-store.js";
import type { InvocationRecord } from "../../../src/governance/audit/ledger.js";
import { withLedgerObjects } from "../../../src/governance/audit/ledger-content-store.js";
import { MemoryLedger } from "../../../src/governance/audit/memory-ledger.js";
import { SqliteLedger } from "../../../src/governance/audit/sqlite-ledger.js";
import { checkStoreIntegrity } from "../../../src/governance/audit/store-integrity.js";
import { ledgerUnderTest } from "../../../src/testing/conformance/ledger-under-test.js";
import { runCli, tempDir, testServerEntry, writeEchoManifests, writeJson } from "../../cli/cli-harness.js";

function row(invocationId: string, refs: Partial<InvocationRecord>): InvocationRecord {
  return {
    invocationId,
    sessionId: "s1",
    sourceId: "demo",
    toolId: "search",
    status: "ok",
    startedAt: "2026-01-01T00:00:00Z",
    finishedAt: "2026-01-01T00:00:01Z",
    durationMs: 1000,
    attempts: 1,
    cacheHit: false,
    queueWaitMs: 0,
    ...refs,
  };
}

function objectPath(root: string, ref: string): string {
  const sha = ref.slice("sha256:".length);
  return join(root, "sha256", sha.slice(0, 2), sha);
}

async function populated() {
  const dir = mkdtempSync(join(tmpdir(), "sciencegate-integrity-"));
  const store = new FileContentStore(join(dir, "cas"));
  const ledger = ledgerUnderTest(await SqliteLedger.open(join(dir, "ledger.sqlite")));
  const request = await store.putJson({ query: "a" });
  const result = await store.putJson({ records: [1, 2, 3] });
  const shared = await store.putJson({ query: "shared" });
  await ledger.append(row("inv-1", { requestRef: request.ref, normalizedRef: result.ref }));
  await ledger.append(row("inv-2", { requestRef: shared.ref }));
  await ledger.append(row("inv-3", { requestRef: shared.ref, rawRef: result.ref }));
  return { dir, store, ledger, refs: { request, result, shared } };
}

describe("checkStoreIntegrity", () => {
  test("an intact ledger and CAS: every distinct reference checked once, ok", async () => {
    const { dir, store, ledger } = await populated();
    expect(await checkStoreIntegrity({ ledger, store })).toEqual({
      rows: 3,
      refs: 3,
      inlineRefs: 0,
      missing: [],
      corrupt: [],
      removedTempFiles: 0,
      ok: true,
    });
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a deleted object is missing for every row that cites it; a changed one is corrupt", async () => {
    const { dir, store, ledger, refs } = await populated();
    rmSync(objectPath(store.root, refs.shared.ref));
    const changed = objectPath(store.root, refs.result.ref);
    chmodSync(changed, 0o644);
    writeFileSync(changed, '{"records":[1,2,4]}');
    const unreferenced = await store.put("nobody cites me");
    writeFileSync(objectPath(store.root, unreferenced.ref), "tampered");
    const report = await checkStoreIntegrity({ ledger, store });
    expect(report.missing).toEqual([
      { invocationId: "inv-2", ref: refs.shared.ref },
      { invocationId: "inv-3", ref: refs.shared.ref },
    ]);
    expect(report.corrupt).toEqual([refs.result.ref, unreferenced.ref].sort());
    expect(report.ok).toBe(false);
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("temp files of a dead writer are removed; this process's own and foreign files stay", async () => {
    const { dir, store, ledger, refs } = await populated();
    const shard = join(store.root, "sha256", refs.request.sha256.slice(0, 2));
    const sha = refs.request.sha256;
    // A pid above the kernel's maximum (4194304) can never be alive.
    const dead = join(shard, `.${sha}.4999999.0b6f2c1e-aaaa-bbbb-cccc-000000000001.tmp`);
    const mine = join(shard, `.${sha}.${process.pid}.0b6f2c1e-aaaa-bbbb-cccc-000000000002.tmp`);
    const other = join(shard, "notes.txt");
    for (const file of [dead, mine, other]) writeFileSync(file, "partial");
    const report = await checkStoreIntegrity({ ledger, store });
    expect(report.removedTempFiles).toBe(1);
    expect(report.ok).toBe(true);
    expect([existsSync(dead), existsSync(mine), existsSync(other)]).toEqual([false, true, true]);
    expect((await checkStoreIntegrity({ ledger, store }, { sweepTemps: false })).removedTempFiles).toBe(0);
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("both places an object lives: inline objects are re-hashed, file objects found and re-hashed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sciencegate-integrity-"));
    const ledger = ledgerUnderTest(
      await SqliteLedger.open(join(dir, "ledger.sqlite"), { maxInlineBytes: 1024 }),
    );
    const files = new FileContentStore(join(dir, "cas"));
    const store = withLedgerObjects(files, ledger);
    const request = jsonObject({ query: "inline" });
    const small = jsonObject({ records: ["small"] });
    const large = contentObject("x".repeat(4096));
    await files.put(large.bytes);
    await ledger.append(
      row("inv-1", { requestRef: request.ref, normalizedRef: small.ref, rawRef: large.ref }),
      [request, small],
    );
    const gone = jsonObject({ never: "stored" });
    await ledger.append(row("inv-2", { requestRef: gone.ref }));
    let report = await checkStoreIntegrity({ ledger, store });
    expect(report).toMatchObject({ rows: 2, refs: 4, inlineRefs: 2, corrupt: [], ok: false });
    expect(report.missing).toEqual([{ invocationId: "inv-2", ref: gone.ref }]);
    expect(await store.getJson(small.ref)).toEqual({ records: ["small"] });
    expect(new TextDecoder().decode(await store.get(large.ref))).toHaveLength(4096);
    // Damage one object in each place: the inline one in the database, the large one on disk.
    const raw = new Database(join(dir, "ledger.sqlite"));
    raw
      .prepare("UPDATE objects SET bytes = ? WHERE sha256 = ?")
      .run(Buffer.from('{"records":["SMALL"]}'), small.sha256);
    raw.close();
    const path = objectPath(files.root, large.ref);
    chmodSync(path, 0o644);
    writeFileSync(path, "y".repeat(4096));
    report = await checkStoreIntegrity({ ledger, store });
    expect(report.corrupt).toEqual([small.ref, large.ref].sort());
    expect(await store.verify(small.ref)).toBe(false);
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("works over any ContentStore (verify per reference)", async () => {
    const store = new MemoryContentStore();
    const ledger = ledgerUnderTest(new MemoryLedger());
    const kept = await store.putJson({ a: 1 });
    await ledger.append(row("inv-1", { requestRef: kept.ref, normalizedRef: `sha256:${"0".repeat(64)}` }));
    const report = await checkStoreIntegrity({ ledger, store });
    expect(report).toMatchObject({ rows: 1, refs: 2, corrupt: [], removedTempFiles: 0, ok: false });
    expect(report.missing).toEqual([{ invocationId: "inv-1", ref: `sha256:${"0".repeat(64)}` }]);
  });
});

test("sciencegate audit --verify: exit 0 when intact, 1 with the damaged object named", async () => {
  const dir = tempDir();
  const manifests = writeEchoManifests(dir);
  const config = writeJson(dir, "extensions_config.json", { mcpServers: { local: testServerEntry() } });
  const args = ["--config", config, "--manifests", manifests];
  const call = await runCli(
    ["call", "mcp__echo-source__echo", ...args, "--args", '{"text":"hi"}', "--json"],
    {},
    dir,
  );
  expect(call.code).toBe(0);
  const intact = await runCli(["audit", "--verify", "--config", config], {}, dir);
  expect(intact.code).toBe(0);
  expect(intact.stdout).toMatch(
    /^1 ledger row\(s\), 3 CAS reference\(s\) \(3 in the ledger, 0 in the CAS\): 0 missing, 0 corrupt/,
  );
  const ledgerPath = join(dir, ".sciencegate", "ledger.sqlite");
  const ledger = ledgerUnderTest(await SqliteLedger.open(ledgerPath));
  const [only] = await ledger.query();
  await ledger.close();
  // The call's objects are small: they live in the ledger, so that is where the damage goes.
  const raw = new Database(ledgerPath);
  const sha = only?.normalizedRef?.slice("sha256:".length);
  const bytes = raw.prepare("SELECT bytes FROM objects WHERE sha256 = ?").pluck().get(sha) as Buffer;
  bytes[bytes.length - 1] = 0x20; // same size, different bytes (a closing brace becomes a space)
  const changed = raw.prepare("UPDATE objects SET bytes = ? WHERE sha256 = ?").run(bytes, sha);
  raw.close();
  expect(changed.changes).toBe(1);
  const damaged = await runCli(["audit", "--verify", "--json", "--config", config], {}, dir);
  expect(damaged.code).toBe(1);
  expect(JSON.parse(damaged.stdout)).toMatchObject({ ok: false, corrupt: [only?.normalizedRef] });
}, 60_000);
