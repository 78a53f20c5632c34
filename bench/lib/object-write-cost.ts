/**
 * What storing one content object costs, by size, as a file (temp file + rename, as `FileContentStore`
 * writes) and as a row of a SQLite table in WAL mode (as the ledger keeps small objects, in the
 * transaction of the invocation row). The ledger's inline threshold is chosen from this measurement.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import Sqlite from "better-sqlite3";

/** Median cost of one object of one size in each place, in ms. */
export interface ObjectWriteCost {
  bytes: number;
  /** A file create to a temp name, then a rename. */
  fileMs: number;
  /** An insert into a WAL table, in a transaction of its own (a ledger row's insert rides along). */
  sqliteMs: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/**
 * Measures both ways of writing objects of each size, in a fresh subdirectory of `dir`.
 * @param dir a directory on the filesystem to measure
 * @param sizes object sizes in bytes
 * @param samples objects per size and place
 * @returns the median cost per size
 */
export function objectWriteCosts(dir: string, sizes: readonly number[], samples = 200): ObjectWriteCost[] {
  mkdirSync(dir, { recursive: true });
  const probe = mkdtempSync(join(dir, "object-cost-"));
  const db = new Sqlite(join(probe, "objects.sqlite"));
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.exec(
      "CREATE TABLE objects (seq INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE, size INTEGER NOT NULL, bytes BLOB NOT NULL)",
    );
    const insert = db.prepare("INSERT OR IGNORE INTO objects (sha256, size, bytes) VALUES (?, ?, ?)");
    const write = db.transaction((key: string, bytes: Buffer) => insert.run(key, bytes.byteLength, bytes));
    const out: ObjectWriteCost[] = [];
    let n = 0;
    for (const bytes of sizes) {
      const file: number[] = [];
      const sqlite: number[] = [];
      const shard = join(probe, `files-${bytes}`);
      mkdirSync(shard);
      for (let i = 0; i < samples; i++) {
        // Fresh content each time, so neither place can dedup.
        const body = randomBytes(bytes);
        const key = `${++n}`;
        let started = performance.now();
        writeFileSync(join(shard, `.${key}.tmp`), body, { flag: "wx" });
        renameSync(join(shard, `.${key}.tmp`), join(shard, key));
        file.push(performance.now() - started);
        started = performance.now();
        write.immediate(key, body);
        sqlite.push(performance.now() - started);
      }
      out.push({ bytes, fileMs: median(file), sqliteMs: median(sqlite) });
    }
    return out;
  } finally {
    db.close();
    rmSync(probe, { recursive: true, force: true });
  }
}
