/**
 * After a crash: checks that the ledger and the CAS still agree (every reference of every row is
 * stored, in the ledger's own objects or in the content store, and hashes to its address; every
 * stored object in either place verifies) and removes the temp files of writes whose process died
 * mid-write. `sciencegate audit --verify` runs it.
 */
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { isGovernanceError } from "../../core/index.js";
import { isProcessAlive } from "../../mcp/index.js";
import { parseContentRef } from "./content-object.js";
import { type ContentStore, FileContentStore } from "./content-store.js";
import type { InvocationRecord, LedgerReader } from "./ledger.js";
import { LedgerContentStore } from "./ledger-content-store.js";

/** What {@link checkStoreIntegrity} found. */
export interface StoreIntegrityReport {
  /** LedgerReader rows whose references were checked. */
  rows: number;
  /** Distinct CAS references those rows hold. */
  refs: number;
  /** Of `refs`, those kept in the ledger itself (the rest are in the content store). */
  inlineRefs: number;
  /** References of rows that are not in the store. */
  missing: { invocationId: string; ref: string }[];
  /**
   * Objects whose bytes no longer hash to their address: rows' references, every object the ledger
   * keeps and, for a file CAS, every object in it.
   */
  corrupt: string[];
  /** Temp files of dead writers that were removed (file CAS only). */
  removedTempFiles: number;
  /** No missing or corrupt object. */
  ok: boolean;
}

const REF_FIELDS = [
  "requestRef",
  "rawRef",
  "normalizedRef",
] as const satisfies readonly (keyof InvocationRecord)[];
// `.<sha256>.<pid>.<uuid>.tmp`, as FileContentStore names a write in progress.
const TEMP_NAME = /^\.[0-9a-f]{64}\.(\d+)\.[0-9a-f-]+\.tmp$/;

/**
 * Checks the ledger's references against the CAS.
 * @param runtime the ledger and the store (a `Governance` fits)
 * @param options `sweepTemps` removes temp files whose writer process is gone @default true
 * @returns counts and the missing or corrupt references
 * @throws GovernanceError `UPSTREAM_UNAVAILABLE` when the ledger is closed
 * @example
 * const report = await checkStoreIntegrity(governance);
 * if (!report.ok) console.error(report.missing, report.corrupt);
 */
export async function checkStoreIntegrity(
  runtime: { ledger: Pick<LedgerReader, "query" | "objects">; store: ContentStore },
  options: { sweepTemps?: boolean } = {},
): Promise<StoreIntegrityReport> {
  const rows = await runtime.ledger.query();
  const layered = runtime.store instanceof LedgerContentStore ? runtime.store : undefined;
  const inline = runtime.ledger.objects ?? layered?.objects;
  const store = layered?.files ?? runtime.store;
  // Every object in the ledger and in a file CAS is re-hashed below: per reference, only presence is asked.
  const files = store instanceof FileContentStore ? store : undefined;
  const missing: StoreIntegrityReport["missing"] = [];
  const corrupt = new Set<string>();
  const inlineBad = inline ? await inline.verifyAll() : [];
  for (const ref of inlineBad) corrupt.add(ref);
  let inlineRefs = 0;
  const seen = new Map<string, boolean>();
  for (const row of rows) {
    for (const field of REF_FIELDS) {
      const ref = row[field];
      if (ref === undefined) continue;
      let stored = seen.get(ref);
      if (stored === undefined) {
        if (inline && (await inline.get(parseContentRef(ref))) !== undefined) {
          stored = true;
          inlineRefs++;
        } else {
          stored = files ? await files.has(ref) : await verifyRef(store, ref, corrupt);
        }
        seen.set(ref, stored);
      }
      if (!stored) missing.push({ invocationId: row.invocationId, ref });
    }
  }
  let removedTempFiles = 0;
  if (files) {
    for (const ref of await files.verifyAll()) corrupt.add(ref);
    if (options.sweepTemps !== false) removedTempFiles = await sweepDeadWriterTemps(files.root);
  }
  return {
    rows: rows.length,
    refs: seen.size,
    inlineRefs,
    missing,
    corrupt: [...corrupt].sort(),
    removedTempFiles,
    ok: missing.length === 0 && corrupt.size === 0,
  };
}

/** Whether the object is stored; a stored object that fails its hash is added to `corrupt`. */
async function verifyRef(store: ContentStore, ref: string, corrupt: Set<string>): Promise<boolean> {
  try {
    if (!(await store.verify(ref))) corrupt.add(ref);
    return true;
  } catch (error) {
    if (isGovernanceError(error) && error.code === "NOT_FOUND") return false;
    throw error;
  }
}

/** Removes `sha256/<shard>/.<sha>.<pid>.<uuid>.tmp` files whose pid is no live process on this host. */
async function sweepDeadWriterTemps(root: string): Promise<number> {
  let removed = 0;
  const base = join(root, "sha256");
  for (const shard of await listDir(base)) {
    for (const name of await listDir(join(base, shard))) {
      const pid = TEMP_NAME.exec(name)?.[1];
      if (pid === undefined || isProcessAlive(Number(pid))) continue;
      await rm(join(base, shard, name), { force: true });
      removed++;
    }
  }
  return removed;
}

async function listDir(path: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch {
    return [];
  }
}
