/**
 * The store a CLI command reads without starting the runtime: in PostgreSQL when
 * `SCIENCEGATE_DATABASE_URL` names a database (as `createGovernance` does), else the SQLite file of
 * the data directory.
 */
import { existsSync } from "node:fs";
import { openPostgres, type PostgresDatabase } from "../core/index.js";
import { resolveGovernanceStorage } from "../runtime/index.js";
import type { CliIo } from "./io.js";

/** How to open one kind of store in either place. */
export interface StateStoreOpeners<S> {
  /** The SQLite file of the data directory. */
  path: string;
  sqlite(path: string): Promise<S>;
  postgres(db: PostgresDatabase): Promise<S>;
}

/**
 * Runs `work` with the store, then closes it (and the database it opened).
 * @param io the environment to read `SCIENCEGATE_DATABASE_URL` from
 * @param openers the two ways to open the store
 * @param work the command; given `undefined` when only reading and no SQLite file exists (listing an
 *   empty data directory must not create one)
 * @param readOnly whether the command only reads
 * @returns what `work` returns
 */
export async function withStateStore<S extends { close(): Promise<void> }, T>(
  io: Pick<CliIo, "env">,
  openers: StateStoreOpeners<S>,
  readOnly: boolean,
  work: (store: S | undefined) => Promise<T>,
): Promise<T> {
  const { postgres } = resolveGovernanceStorage({}, io.env);
  const db = postgres ? await openPostgres(postgres.url, { maxConnections: 2 }) : undefined;
  try {
    if (db === undefined && readOnly && !existsSync(openers.path)) return await work(undefined);
    const store = db ? await openers.postgres(db) : await openers.sqlite(openers.path);
    try {
      return await work(store);
    } finally {
      await store.close();
    }
  } finally {
    await db?.close();
  }
}
