/** Opening an embedded SQLite store the same way everywhere (ledger, grants, download jobs). */
import { open } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { GovernanceError } from "./errors.js";
import { makePrivateDir, PRIVATE_FILE_MODE, tightenSqliteFiles } from "./private-files.js";

/**
 * Opens a database (creating the file 0600 and its missing parent directories 0700, and taking group
 * and other permissions off an existing file and its `-wal`/`-shm`), in WAL mode with a 5 s busy timeout so
 * several processes on one host can share it, then runs `setup` (schema, migrations). The database
 * is closed again when `setup` throws.
 * @param path a file path, or `":memory:"` for a private in-memory database
 * @param setup creates or migrates the schema; receives the absolute path for error messages
 * @returns the open database and its absolute path (`:memory:` unchanged)
 * @throws whatever opening the file or `setup` throws
 */
export async function openSqlite(
  path: string,
  setup: (db: BetterSqlite3.Database, absolute: string) => void,
): Promise<{ db: BetterSqlite3.Database; path: string }> {
  const isMemory = path === ":memory:";
  const absolute = isMemory ? path : resolve(path);
  if (!isMemory) {
    // Every request and result is in here: the file (and the -wal and -shm SQLite gives its mode)
    // is private, also when an earlier version made it readable by others.
    await makePrivateDir(dirname(absolute));
    await (await open(absolute, "a", PRIVATE_FILE_MODE)).close();
    await tightenSqliteFiles(absolute);
  }
  // Loaded on first use: the native module is only needed by apps that keep data on disk.
  const { default: Sqlite } = await import("better-sqlite3");
  const db = new Sqlite(absolute);
  try {
    db.pragma("busy_timeout = 5000");
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    setup(db, absolute);
  } catch (error) {
    db.close();
    throw error;
  }
  return { db, path: absolute };
}

/**
 * Brings a store's schema to the newest version in one IMMEDIATE transaction: runs the migrations
 * after the recorded version and records the new one.
 * @param db the open database
 * @param schema the version table's name, the store's name for messages, its file and its migrations
 *   (each one SQL script; their count is the schema version)
 * @throws GovernanceError `INVALID_CONFIG` when the file was written by a newer schema version
 */
export function migrateSchema(
  db: BetterSqlite3.Database,
  schema: { versionTable: string; label: string; path: string; migrations: readonly string[] },
): void {
  const { versionTable, label, path, migrations } = schema;
  db.transaction(() => {
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${versionTable} (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`,
    );
    const row = db.prepare(`SELECT version FROM ${versionTable} WHERE id = 1`).get() as
      | { version: number }
      | undefined;
    const current = row?.version ?? 0;
    if (current > migrations.length) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        `${label} ${path} has schema version ${current}, newer than this Sciencegate supports (${migrations.length}); upgrade Sciencegate or point SCIENCEGATE_HOME elsewhere.`,
        { data: { path, version: current, supported: migrations.length } },
      );
    }
    for (const step of migrations.slice(current)) db.exec(step);
    db.prepare(`INSERT OR REPLACE INTO ${versionTable} (id, version) VALUES (1, ?)`).run(migrations.length);
  }).immediate();
}
