/**
 * The stdio comparison of the broker bench: `@modelcontextprotocol/server-memory` (`read_graph`)
 * reached four ways side by side: the MCP SDK `Client`, a `@langchain/mcp-adapters` tool, and
 * `Broker.invoke` (SQLite ledger + file CAS, no permission prompts) with its data directory in `/tmp`
 * and under the working folder. Each client runs its own child process of the same server program.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { ServerConfig } from "../../src/config/types.js";
import { FileContentStore } from "../../src/governance/audit/content-store.js";
import { LedgerWriter } from "../../src/governance/audit/ledger-writer.js";
import { SqliteLedger } from "../../src/governance/audit/sqlite-ledger.js";
import { Broker } from "../../src/governance/broker/broker.js";
import { SourceCatalog } from "../../src/governance/catalog/source-catalog.js";
import type { SourceManifestInput } from "../../src/governance/manifests/manifest-schema.js";
import { SourceRegistry } from "../../src/governance/manifests/source-registry.js";
import { RateLimiter } from "../../src/governance/rate-limit/rate-limiter.js";
import { ServerPool } from "../../src/mcp/server-pool.js";
import { resolveDataDir } from "../../src/runtime/data-dir.js";

/** Source id and server id of the memory server (its tools' results are not cached). */
export const MEMORY_SOURCE = "memory";
/** A second source on the same server whose results are cached. */
export const MEMORY_CACHED_SOURCE = "memory-cached";
/** The tool. */
export const READ_GRAPH = "read_graph";

function tool(id: string, cached: boolean): SourceManifestInput["tools"][number] {
  return {
    id,
    description: "Read the entire knowledge graph.",
    kind: "lookup",
    mcpToolName: READ_GRAPH,
    inputSchema: { type: "object", properties: {} },
    readOnly: true,
    permission: {
      action: `memory:${id}`,
      resourceTemplate: `memory:${id}`,
      summaryTemplate: "Read the graph",
    },
    cachePolicy: { enabled: cached, ttlSeconds: 600 },
    timeoutMs: 10_000,
    routing: { keywords: ["graph"], mode: "off", priority: 0 },
    promptFragment: "",
  };
}

/** A manifest for the memory server; its rate-limit group has no limits. */
function memoryManifest(id: string, cached: boolean): SourceManifestInput {
  return {
    id,
    displayName: "Memory",
    description: "The MCP reference knowledge-graph server.",
    publisher: "Model Context Protocol",
    version: "bench",
    kind: "other",
    enabledByDefault: true,
    transport: { mcpServerId: MEMORY_SOURCE },
    cache: { enabled: true, ttlSeconds: 600 },
    prompt: { summary: "A knowledge graph.", citationPolicy: "Cite the graph.", caveats: [] },
    governance: {
      attribution: "Memory server",
      license: "MIT",
      termsUrl: "https://example.org/terms",
      dataClassification: "public",
      networkHosts: [],
      maxResponseBytes: 1_000_000,
      rateLimitGroup: MEMORY_SOURCE,
    },
    tools: [tool(READ_GRAPH, cached)],
  };
}

/** A broker with its data directory and stores. */
export interface StdioBroker {
  broker: Broker;
  ledger: SqliteLedger;
  dir: string;
}

/** Everything the stdio comparison drives; `close()` stops every child and removes the directories. */
export interface MemoryServerFixture {
  sdk: Client;
  adapterTool: StructuredToolInterface;
  /** Data directory in the OS temp folder. */
  tmp: StdioBroker;
  /** Data directory under the working folder (`SCIENCEGATE_HOME`, default `./.sciencegate`). */
  work: StdioBroker;
  close(): Promise<void>;
}

/**
 * Starts the memory server for each client and builds both brokers over one pool and catalog.
 * @returns the fixture
 * @throws Error when the server package is missing or its tool is not offered
 */
export async function createMemoryServerFixture(): Promise<MemoryServerFixture> {
  const entry = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-memory/dist/index.js");
  const scratch = await mkdtemp(join(tmpdir(), "sciencegate-bench-memory-"));
  const env = { MEMORY_FILE_PATH: join(scratch, "memory.jsonl") };
  const closers: (() => Promise<unknown>)[] = [() => rm(scratch, { recursive: true, force: true })];
  const close = async () => {
    for (const step of closers.splice(0).reverse()) await step().catch(() => undefined);
  };
  try {
    const sdk = new Client({ name: "bench-sdk", version: "1.0.0" });
    await sdk.connect(
      new StdioClientTransport({ command: process.execPath, args: [entry], env, stderr: "ignore" }),
    );
    closers.push(() => sdk.close());
    const adapters = new MultiServerMCPClient({
      mcpServers: { [MEMORY_SOURCE]: { transport: "stdio", command: process.execPath, args: [entry], env } },
    });
    closers.push(() => adapters.close());
    const adapterTool = (await adapters.getTools()).find((t) => t.name.endsWith(READ_GRAPH));
    if (!adapterTool) throw new Error("@langchain/mcp-adapters did not offer read_graph.");
    const server: ServerConfig = {
      id: MEMORY_SOURCE,
      transport: "stdio",
      command: process.execPath,
      args: [entry],
      env,
      headers: {},
      enabled: true,
      tools: {},
    };
    const pool = new ServerPool([server]);
    closers.push(() => pool.close());
    const registry = new SourceRegistry();
    registry.register(memoryManifest(MEMORY_SOURCE, false));
    registry.register(memoryManifest(MEMORY_CACHED_SOURCE, true));
    const catalog = new SourceCatalog({ registry, pool });
    const snapshot = await catalog.refresh();
    const source = snapshot.sources.find((s) => s.id === MEMORY_SOURCE);
    if (source?.status !== "ready") {
      throw new Error(`Memory source is ${source?.status ?? "absent"}: ${source?.reason ?? "no reason"}`);
    }
    const limiter = new RateLimiter({ groups: registry.rateLimitGroups() });
    const brokerIn = async (base: string): Promise<StdioBroker> => {
      await mkdir(base, { recursive: true });
      const dir = await mkdtemp(join(base, "bench-broker-"));
      closers.push(() => rm(dir, { recursive: true, force: true }));
      const ledger = await SqliteLedger.open(join(dir, "ledger.sqlite"));
      closers.push(() => ledger.close());
      const store = new FileContentStore(join(dir, "cas"));
      return {
        broker: new Broker({ catalog, pool, ledgerWriter: new LedgerWriter(ledger), store, limiter }),
        ledger,
        dir,
      };
    };
    const tmp = await brokerIn(tmpdir());
    const work = await brokerIn(resolveDataDir());
    return { sdk, adapterTool, tmp, work, close };
  } catch (error) {
    await close();
    throw error;
  }
}
