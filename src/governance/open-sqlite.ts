/** Opening an embedded SQLite store the same way everywhere (ledger, grants, download jobs). */
import { mkdir } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type BetterSqlite3 from "better-sqlite3";

/**
 * Opens a database (creating the file's parent directories), in WAL mode with a 5 s busy timeout so
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
  if (!isMemory) await mkdir(dirname(absolute), { recursive: true });
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
