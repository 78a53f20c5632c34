/**
 * Where a governed call's objects go: small ones into the ledger, in the transaction of the call's
 * row (no file created), large ones into the file CAS before the row; every reader finds both.
 */
import { readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { FileContentStore } from "../../../src/governance/audit/content-store.js";
import { withLedgerObjects } from "../../../src/governance/audit/ledger-content-store.js";
import { SqliteLedger } from "../../../src/governance/audit/sqlite-ledger.js";
import { checkStoreIntegrity } from "../../../src/governance/audit/store-integrity.js";
import { createHarness, type Harness } from "./broker-harness.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function onDisk(maxInlineBytes?: number) {
  const dir = await mkdtemp(join(tmpdir(), "sciencegate-broker-records-"));
  const ledger = await SqliteLedger.open(
    join(dir, "ledger.sqlite"),
    maxInlineBytes === undefined ? {} : { maxInlineBytes },
  );
  const files = new FileContentStore(join(dir, "cas"));
  const harness: Harness = await createHarness({ ledger, store: files });
  cleanup.push(
    () => rm(dir, { recursive: true, force: true }),
    () => ledger.close(),
    () => harness.close(),
  );
  return { broker: harness.broker, ledger, files, casFiles: () => listFiles(files.root) };
}

function listFiles(root: string): string[] {
  try {
    return readdirSync(join(root, "sha256"), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}

const call = (toolId: string, extra: Record<string, string> = {}) => ({
  sourceId: "demo",
  toolId,
  input: { query: "brca1" },
  sessionId: "s1",
  ...extra,
});

test("an uncached call keeps its request, raw and normalized objects in the ledger: no CAS file", async () => {
  const { broker, ledger, files, casFiles } = await onDisk();
  const outcome = await broker.invoke(call("search"));
  const row = await ledger.get(outcome.invocationId);
  const refs = [row?.requestRef, row?.rawRef, row?.normalizedRef] as string[];
  expect(refs.every((ref) => /^sha256:[0-9a-f]{64}$/.test(ref))).toBe(true);
  expect(casFiles()).toEqual([]);
  for (const ref of refs) expect(await ledger.objects?.get(ref.slice(7))).toBeDefined();
  // Every reader of the store finds them: the broker's own view and one built from the two stores.
  expect(await broker.store.getJson(row?.normalizedRef as string)).toEqual(outcome.result);
  expect(await withLedgerObjects(files, ledger).verify(row?.rawRef as string)).toBe(true);
  expect(await checkStoreIntegrity({ ledger, store: broker.store })).toMatchObject({
    rows: 1,
    refs: 3,
    inlineRefs: 3,
    ok: true,
  });
});

test("objects past the inline limit go to the file CAS, written before the row; the rest stay inline", async () => {
  const { broker, ledger, files, casFiles } = await onDisk(200);
  const outcome = await broker.invoke(call("search"));
  const row = await ledger.get(outcome.invocationId);
  const request = (await broker.store.get(row?.requestRef as string)).byteLength;
  expect(request).toBeLessThanOrEqual(200);
  expect(await ledger.objects?.get(String(row?.requestRef).slice(7))).toBeDefined();
  for (const ref of [row?.rawRef, row?.normalizedRef] as string[]) {
    expect(await files.has(ref)).toBe(true);
    expect(await ledger.objects?.get(ref.slice(7))).toBeUndefined();
  }
  expect(casFiles()).toHaveLength(2);
  expect(await broker.store.getJson(row?.normalizedRef as string)).toEqual(outcome.result);
});

test("a replayed call reads its recorded result from the ledger's objects", async () => {
  const { broker, casFiles } = await onDisk();
  const key = { threadId: "t1", toolCallId: "c1" };
  const first = await broker.invoke(call("search", key));
  const again = await broker.invoke(call("search", key));
  expect(again).toMatchObject({ replayed: true, invocationId: first.invocationId });
  expect(again.result).toEqual(first.result);
  expect(casFiles()).toEqual([]);
});

test("calls made at once share commits and each still gets its own complete row", async () => {
  const { broker, ledger } = await onDisk();
  const outcomes = await Promise.all(
    Array.from({ length: 40 }, (_, i) => broker.invoke({ ...call("search"), input: { query: `q${i}` } })),
  );
  const rows = await ledger.query();
  expect(rows.map((r) => r.invocationId).sort()).toEqual(outcomes.map((o) => o.invocationId).sort());
  expect(await checkStoreIntegrity({ ledger, store: broker.store })).toMatchObject({ rows: 40, ok: true });
});
