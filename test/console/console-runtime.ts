/**
 * A console over a real runtime for the page tests: `createGovernance` with its default stores in a
 * temporary data directory (SQLite ledger with inline objects, file CAS), the bundled sources server
 * in memory against loopback fake providers, and `serveConsole` on a free port. ChEMBL answers the
 * query `hostile` with 100 molecules, the first titled with markup, so records come from real calls.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ConsoleServer, serveConsole } from "../../src/console/index.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import { createSourcesServer, SOURCES_SERVER_ID } from "../../src/servers/index.js";
import {
  type FakeProviderServer,
  type FakeRoute,
  providerEnvFor,
  providerPath,
  startFakeProviderServer,
} from "../../src/testing/fake-provider-server.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { CHEMBL_FIXTURES, chemblFakeRoutes } from "../fixtures/providers/chembl/routes.js";

/** The title ChEMBL gives the first molecule of the `hostile` search. */
export const HOSTILE_TITLE = "<script>alert(1)</script><img src=x onerror=alert(2)>";
/** The same title as the console must render it. */
export const HOSTILE_TITLE_ESCAPED =
  "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;";

/** ChEMBL's molecule search for `hostile`: 100 molecules (the raw result passes the ledger's inline limit). */
function hostileChemblRoute(): FakeRoute {
  const fixture = JSON.parse(readFileSync(join(CHEMBL_FIXTURES, "molecule-search-imatinib.json"), "utf8"));
  const [template] = fixture.molecules as Record<string, unknown>[];
  const molecules = Array.from({ length: 100 }, (_, i) => {
    const id = `CHEMBL${990_000 + i}`;
    return {
      ...template,
      molecule_chembl_id: id,
      molecule_hierarchy: { active_chembl_id: id, molecule_chembl_id: id, parent_chembl_id: id },
      pref_name: i === 0 ? HOSTILE_TITLE : `MOLECULE ${i}`,
    };
  });
  return {
    path: providerPath("chembl", "api", "/molecule/search.json"),
    query: { q: "hostile" },
    body: JSON.stringify({
      molecules,
      page_meta: { limit: 100, next: null, offset: 0, previous: null, total_count: 100 },
    }),
    headers: { "content-type": "application/json" },
  };
}

/** A fetched answer. */
export interface Fetched {
  status: number;
  headers: Headers;
  body: string;
}

/** A console over a real runtime. */
export interface ConsoleRuntime {
  governance: Governance;
  provider: FakeProviderServer;
  server: ConsoleServer;
  dataDir: string;
  /** GETs a console path. */
  get(path: string): Promise<Fetched>;
  /** POSTs a form from the console's own origin. */
  post(path: string, fields: Record<string, string>): Promise<Fetched>;
  close(): Promise<void>;
}

/**
 * Starts the runtime and the console.
 * @param options what `serveConsole` gets besides the port
 */
export async function startConsoleRuntime(
  options: Omit<Parameters<typeof serveConsole>[0], "port" | "governance"> = {},
): Promise<ConsoleRuntime> {
  const dataDir = mkdtempSync(join(tmpdir(), "sciencegate-console-"));
  const provider = await startFakeProviderServer({ routes: [hostileChemblRoute(), ...chemblFakeRoutes()] });
  const governance = await createGovernance({
    config: { servers: [] },
    storage: { dataDir },
    mcp: {
      pool: createInMemoryPool({
        [SOURCES_SERVER_ID]: () =>
          createSourcesServer({ only: ["chembl"], env: providerEnvFor(provider.url) }),
      }),
    },
  });
  const server = await serveConsole({ governance, ...options, port: 0 });
  const read = async (response: Response): Promise<Fetched> => ({
    status: response.status,
    headers: response.headers,
    body: await response.text(),
  });
  return {
    governance,
    provider,
    server,
    dataDir,
    get: async (path) => read(await fetch(`${server.url}${path}`, { redirect: "manual" })),
    post: async (path, fields) =>
      read(
        await fetch(`${server.url}${path}`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
          body: new URLSearchParams(fields).toString(),
        }),
      ),
    async close() {
      await server.close();
      await governance.close();
      await provider.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The markup of the element with this `id` (up to its matching close tag; elements of the same name
 * nested inside are counted).
 * @param body the page
 * @param id the element's id
 */
export function elementById(body: string, id: string): string {
  const start = body.search(new RegExp(`<([a-z0-9]+)[^>]*\\sid="${id}"`));
  if (start < 0) throw new Error(`No element #${id} in the page`);
  const tag = /^<([a-z0-9]+)/.exec(body.slice(start))?.[1] ?? "";
  const pattern = new RegExp(`<${tag}[\\s>]|</${tag}>`, "g");
  pattern.lastIndex = start;
  let depth = 0;
  for (let match = pattern.exec(body); match; match = pattern.exec(body)) {
    depth += match[0].startsWith("</") ? -1 : 1;
    if (depth === 0) return body.slice(start, match.index + match[0].length);
  }
  throw new Error(`#${id} is not closed`);
}

/** The `href` of every link in some markup. */
export function hrefs(markup: string): string[] {
  return [...markup.matchAll(/<a\s[^>]*href="([^"]*)"/g)].map((match) => match[1] ?? "");
}
