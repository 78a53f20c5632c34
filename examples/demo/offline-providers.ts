/** Starts the loopback fake provider server with every source's hand-made fixtures (test/fixtures/providers). */
import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  type FakeProviderServer,
  type FakeRoute,
  providerEnvFor,
  startFakeProviderServer,
} from "sciencegate/testing";

const FIXTURES = resolve(import.meta.dirname, "../../test/fixtures/providers");

/** Every `*FakeRoutes()` export of every `test/fixtures/providers/<source>/routes.ts`. */
export async function allFakeRoutes(): Promise<FakeRoute[]> {
  const builders = new Set<() => FakeRoute[]>();
  for (const source of readdirSync(FIXTURES).sort()) {
    const file = join(FIXTURES, source, "routes.ts");
    if (!existsSync(file)) continue;
    const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) {
      // Zero-argument builders only: parameterised helpers (shared by two sources) are called by those.
      if (name.endsWith("FakeRoutes") && typeof value === "function" && value.length === 0) {
        builders.add(value as () => FakeRoute[]);
      }
    }
  }
  return [...builders].flatMap((build) => build());
}

/**
 * Starts the fake providers on 127.0.0.1.
 * @returns the server and the `SCIENCEGATE_<SOURCE>_BASE_URL` variables pointing at it
 */
export async function startOfflineProviders(): Promise<{
  server: FakeProviderServer;
  env: Record<string, string>;
}> {
  const server = await startFakeProviderServer({ routes: await allFakeRoutes() });
  return { server, env: providerEnvFor(server.url) };
}
