/**
 * Fresh, empty stores in milliseconds: each call makes a new schema in one test database and returns
 * a URL whose connections use it (`search_path`), so a store's unqualified tables land there.
 * Creating a database per test costs ~0.3 s; a schema costs a few ms.
 */
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { openTestPostgres, type TestPostgres } from "./test-postgres.js";

/**
 * A factory of URLs, each to a new empty schema of `databaseUrl`.
 * @param databaseUrl a database (e.g. from `TestPostgres.createDatabase()`)
 * @returns `next()` for a new schema's URL
 */
export function schemaUrls(databaseUrl: string): { next(): Promise<string> } {
  let count = 0;
  return {
    async next() {
      const schema = `store_${++count}`;
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        await client.query(`CREATE SCHEMA ${schema}`);
      } finally {
        await client.end();
      }
      const url = new URL(databaseUrl);
      url.searchParams.set("options", `-c search_path=${schema}`);
      return url.toString();
    },
  };
}

/**
 * Makes a store's `close()` also close the database it was opened on (stores never close a database
 * they were given), so that a conformance suite's store per test leaves no pool behind.
 * @param store the store
 * @param db its database
 * @returns the same store
 */
export function closingDatabase<T extends { close(): Promise<void> }>(
  store: T,
  db: { close(): Promise<void> },
): T {
  const close = store.close.bind(store);
  store.close = async () => {
    await close();
    await db.close();
  };
  return store;
}

/**
 * A database of the run's test PostgreSQL for the calling file (made before its tests, dropped after
 * them) and fresh schemas of it.
 * @returns `next()` for a new schema's URL (call it from a test or hook)
 */
export function useTestSchemas(): { next(): Promise<string> } {
  let server: TestPostgres | undefined;
  let schemas: { next(): Promise<string> } | undefined;
  beforeAll(async () => {
    server = await openTestPostgres();
    schemas = schemaUrls(await server.createDatabase());
  }, 60_000);
  afterAll(() => server?.stop(), 60_000);
  return {
    next() {
      if (!schemas) throw new Error("useTestSchemas: next() before the file's beforeAll ran");
      return schemas.next();
    },
  };
}
