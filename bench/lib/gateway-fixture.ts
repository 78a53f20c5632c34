/**
 * The gateway bench's clients: two pairs, each a direct MCP SDK `Client` on the bundled sources server
 * (PubMed `search` only, its provider a loopback fake) and the same client on the gateway whose runtime
 * reaches that same server code, so the only difference within a pair is the gateway and broker between.
 * - stdio (what users run): `sciencegate serve sources --only pubmed` vs `sciencegate serve gateway
 *   --eager --config science.toml --manifests DIR`, the project's one provider being the same command;
 *   data (SQLite ledger, file CAS) in the OS temp folder.
 * - in process: `createSourcesServer()` over `InMemoryTransport` vs `createGatewayServer()` over
 *   `InMemoryTransport`, its runtime (`createGovernance`, SQLite ledger, file CAS) reaching another
 *   `createSourcesServer()` through an in-memory pool.
 * The gateway governs the server with PubMed's own manifest minus its rate limits (the 3 requests/s
 * NCBI allows would time the limiter, not the gateway). The CLI cannot override a built-in manifest's
 * limits, and a config file always loads the built-in manifests (whose `pubmed` would clash with this
 * one), so the stdio gateway reads a `science.toml` project, which leaves them out.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { bundledServerCommand } from "../../src/config/default-config.js";
import { createGatewayServer } from "../../src/gateway/index.js";
import { type LedgerSummary, SqliteLedger } from "../../src/governance/audit/index.js";
import { builtinManifestDir } from "../../src/governance/manifests/manifest-loader.js";
import { createGovernance } from "../../src/runtime/index.js";
import { createSourcesServer } from "../../src/servers/sources/sources-server.js";
import {
  type FakeProviderServer,
  providerEnvFor,
  providerPath,
  startFakeProviderServer,
} from "../../src/testing/fake-provider-server.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { modelVisibleName } from "../../src/visibility/index.js";
import { PUBMED_FIXTURES, pubmedFakeRoutes } from "../../test/fixtures/providers/pubmed/routes.js";

/** The gateway's source: PubMed's manifest without rate limits (the server's results say `pubmed`). */
export const BENCH_SOURCE = "pubmed";
/** The sources server's id in the gateway's config (the `science.toml` provider) and pool. */
const SERVER_ID = "sources";
/** The tool as the sources server names it. */
export const DIRECT_TOOL = "pubmed_search";
/** The same tool as the gateway names it. */
export const GATEWAY_TOOL = modelVisibleName(BENCH_SOURCE, "search");
/** Records every answer carries (the fake's esearch fixture lists two PMIDs). */
export const RECORDS_PER_CALL = 2;

/** One MCP client and the tool it calls; `call` throws unless the answer holds the expected records. */
export interface BenchClient {
  call(query: string): Promise<CallToolResult>;
}

/** A direct client and a gateway client over the same server code. */
export interface ClientPair {
  direct: BenchClient;
  gateway: BenchClient;
}

/** Everything the gateway bench drives; `close()` stops every process and removes the folders. */
export interface GatewayFixture {
  stdio: ClientPair;
  inProcess: ClientPair;
  /** The fake provider (its request log tells which calls reached the provider). */
  provider: FakeProviderServer;
  /** The in-process gateway's ledger totals. */
  inProcessLedger(): Promise<LedgerSummary>;
  /**
   * Closes the stdio gateway (it writes its last rows and exits) and reads its ledger's totals.
   * @returns the totals of the stdio gateway's ledger
   */
  closeStdioGateway(): Promise<LedgerSummary>;
  close(): Promise<void>;
}

function benchClient(client: Client, tool: string): BenchClient {
  return {
    async call(query) {
      const result = (await client.callTool({ name: tool, arguments: { query } })) as CallToolResult;
      const records = (result.structuredContent as { records?: unknown[] } | undefined)?.records;
      if (result.isError || records?.length !== RECORDS_PER_CALL) {
        const [first] = result.content;
        throw new Error(`${tool} answered ${first?.type === "text" ? first.text : JSON.stringify(result)}`);
      }
      return result;
    },
  };
}

async function writeBenchManifest(dir: string): Promise<void> {
  const pubmed = JSON.parse(await readFile(join(builtinManifestDir(), "pubmed.json"), "utf8")) as {
    governance: Record<string, unknown>;
  };
  const {
    rateLimitPerSecond: _rate,
    maxConcurrentRequests: _concurrent,
    maxQueueDepth: _queue,
    queueTimeoutMs: _timeout,
    ...governance
  } = pubmed.governance;
  const manifest = { ...pubmed, transport: { mcpServerId: SERVER_ID }, governance };
  await writeFile(join(dir, `${BENCH_SOURCE}.json`), JSON.stringify(manifest, null, 2));
}

async function stdioClient(
  name: string,
  command: { command: string; args: string[] },
  env: Record<string, string>,
  cwd: string,
): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ ...command, env, cwd, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4000);
  });
  const client = new Client({ name, version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (error) {
    await transport.close();
    throw new Error(`${command.args.join(" ")} did not start: ${stderr}`, { cause: error });
  }
  return { client, stderr: () => stderr };
}

async function memoryClient(name: string, serve: (transport: InMemoryTransport) => Promise<unknown>) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await serve(serverSide);
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

/**
 * Starts the fake provider, both sources-server processes, the gateway process and the in-process pair.
 * @returns the fixture
 * @throws Error when a process does not start or the gateway does not list the bench tool
 */
export async function createGatewayFixture(): Promise<GatewayFixture> {
  const scratch = await mkdtemp(join(tmpdir(), "sciencegate-bench-gateway-"));
  const closers: (() => Promise<unknown>)[] = [() => rm(scratch, { recursive: true, force: true })];
  const close = async () => {
    for (const step of closers.splice(0).reverse()) await step().catch(() => undefined);
  };
  try {
    // Every query finds the fixture's two PMIDs, so distinct queries do the same work upstream.
    const anyQuery = {
      path: providerPath("pubmed", "eutils", "/esearch.fcgi"),
      file: join(PUBMED_FIXTURES, "esearch-crispr.json"),
    };
    const provider = await startFakeProviderServer({ routes: [anyQuery, ...pubmedFakeRoutes()] });
    closers.push(() => provider.close());
    const providerEnv = providerEnvFor(provider.url);
    const manifests = join(scratch, "manifests");
    await mkdir(manifests);
    await writeBenchManifest(manifests);
    const sourcesCommand = bundledServerCommand("sources", ["--only", "pubmed"]);
    const config = join(scratch, "science.toml");
    const commandLine = [sourcesCommand.command, ...sourcesCommand.args].map((word) => `'${word}'`).join(" ");
    await writeFile(config, `[tools.${SERVER_ID}]\ncommand = "${commandLine}"\n`);
    const stdioDataDir = join(scratch, "stdio-data");
    // The gateway runs in the scratch folder, where no extensions_config.json brings the built-in manifests.
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      SCIENCEGATE_HOME: stdioDataDir,
      ...providerEnv,
    };

    const direct = await stdioClient("bench-direct", sourcesCommand, env, scratch);
    closers.push(() => direct.client.close());
    const gatewayArgs = ["--eager", "--config", config, "--manifests", manifests, "--session", "bench"];
    const gateway = await stdioClient(
      "bench-gateway",
      bundledServerCommand("gateway", gatewayArgs),
      env,
      scratch,
    );
    let gatewayOpen = true;
    const closeGateway = async () => {
      if (gatewayOpen) await gateway.client.close();
      gatewayOpen = false;
    };
    closers.push(closeGateway);
    const listed = (await gateway.client.listTools()).tools.map((t) => t.name);
    if (!listed.includes(GATEWAY_TOOL)) {
      throw new Error(`The gateway lists ${listed.join(", ")}, not ${GATEWAY_TOOL}: ${gateway.stderr()}`);
    }

    const governance = await createGovernance({
      config: { servers: [] },
      manifests: { builtin: false, dirs: [manifests] },
      mcp: {
        pool: createInMemoryPool({
          [SERVER_ID]: createSourcesServer({ only: ["pubmed"], env: providerEnv }),
        }),
      },
      storage: { dataDir: join(scratch, "in-process-data") },
      env: providerEnv,
    });
    closers.push(() => governance.close());
    const gatewayServer = createGatewayServer({ governance, eager: true });
    closers.push(() => gatewayServer.close());
    const inProcessDirect = await memoryClient("bench-direct", (t) =>
      createSourcesServer({ only: ["pubmed"], env: providerEnv }).connect(t),
    );
    closers.push(() => inProcessDirect.close());
    const inProcessGateway = await memoryClient("bench-gateway", (t) =>
      gatewayServer.connect(t, { sessionId: "bench" }),
    );
    closers.push(() => inProcessGateway.close());

    return {
      stdio: {
        direct: benchClient(direct.client, DIRECT_TOOL),
        gateway: benchClient(gateway.client, GATEWAY_TOOL),
      },
      inProcess: {
        direct: benchClient(inProcessDirect, DIRECT_TOOL),
        gateway: benchClient(inProcessGateway, GATEWAY_TOOL),
      },
      provider,
      inProcessLedger: () => governance.ledger.summary(),
      async closeStdioGateway() {
        await closeGateway();
        const ledger = await SqliteLedger.open(join(stdioDataDir, "ledger.sqlite"));
        try {
          return await ledger.summary();
        } finally {
          await ledger.close();
        }
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
