/**
 * The servers the user-path benchmarks govern, as a user configures them: (a) a trivial read-only tool
 * on a stdio server of the user's own (`trivial-server.mjs`, with a manifest), (b) the bundled sources
 * server (`sciencegate serve sources --only pubmed`) against a loopback fake of the provider. Each comes
 * as an `extensions_config.json` (the file the CLI reads; its `mcpServers` object is what
 * `createGovernance({ config })` takes) and a manifest folder, and each benchmark client (the raw SDK,
 * a runtime's pool, a gateway) runs its own child of the same server program.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { builtinManifestDir } from "../../src/governance/manifests/manifest-loader.js";
import type { SourceManifestInput } from "../../src/governance/manifests/manifest-schema.js";
import { createGovernance, type Governance } from "../../src/index.js";
import {
  type FakeProviderServer,
  providerEnvFor,
  providerPath,
  startFakeProviderServer,
} from "../../src/testing/fake-provider-server.js";
import { PUBMED_FIXTURES, pubmedFakeRoutes } from "../../test/fixtures/providers/pubmed/routes.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const builtCli = join(root, "dist", "cli", "main.js");

/** A command line to spawn. */
export interface Command {
  command: string;
  args: string[];
}

/**
 * The `sciencegate` command as users run it: the built CLI (`dist/`, which `npm run bench` builds
 * first), else the sources through tsx.
 * @param args the command's arguments
 * @returns the command line, and whether it is the built one
 */
export function sciencegateCommand(args: readonly string[]): Command & { built: boolean } {
  if (existsSync(builtCli)) return { command: process.execPath, args: [builtCli, ...args], built: true };
  const tsx = import.meta.resolve("tsx");
  const entry = join(root, "src", "cli", "main.ts");
  return { command: process.execPath, args: ["--import", tsx, entry, ...args], built: false };
}

/** One governed server: its config entry, the tool as the server and as the gateway name it, and how to call it. */
export interface UserServer {
  /** The server id in `mcpServers` (and the manifest's `transport.mcpServerId`). */
  serverId: string;
  /** The source id of its manifest. */
  sourceId: string;
  /** The tool's id in the manifest (what `broker.invoke` takes). */
  toolId: string;
  /** The MCP tool name on the server (what the raw SDK calls). */
  mcpToolName: string;
  /** The model-visible name (`mcp__<source>__<tool>`): what an executor or a gateway client calls. */
  modelName: string;
  /** The server's command and environment. */
  command: Command;
  env: Record<string, string>;
  /** The call's arguments for a call index (distinct per call). */
  args(index: number): Record<string, unknown>;
  /** Throws unless a result is the tool's normal answer (so no benchmark times an error). */
  check(result: CallToolResult): void;
}

/** The trivial server's source id; `lookup` is not cached, `lookup_cached` is. */
export const TRIVIAL_SOURCE = "trivial";

function trivialManifest(): SourceManifestInput {
  const tool = (id: string, cached: boolean): SourceManifestInput["tools"][number] => ({
    id,
    description: "Looks up one record by id.",
    kind: "lookup",
    mcpToolName: id,
    inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    readOnly: true,
    permission: {
      action: `trivial:${id}`,
      resourceTemplate: "trivial:{id}",
      summaryTemplate: "Look up {id}",
    },
    cachePolicy: { enabled: cached, ttlSeconds: 600 },
    timeoutMs: 10_000,
    routing: { keywords: ["record"], mode: "off", priority: 0 },
    promptFragment: "",
  });
  return {
    id: TRIVIAL_SOURCE,
    displayName: "Trivial",
    description: "A trivial read-only lookup for benchmarks.",
    publisher: "Sciencegate bench",
    version: "1.0.0",
    kind: "other",
    enabledByDefault: true,
    transport: { mcpServerId: TRIVIAL_SOURCE },
    cache: { enabled: true, ttlSeconds: 600 },
    prompt: { summary: "Records by id.", citationPolicy: "Cite the record id.", caveats: [] },
    governance: {
      attribution: "Bench records",
      license: "CC0-1.0",
      termsUrl: "https://example.org/terms",
      dataClassification: "public",
      networkHosts: [],
      maxResponseBytes: 1_000_000,
      rateLimitGroup: TRIVIAL_SOURCE,
    },
    tools: [tool("lookup", false), tool("lookup_cached", true)],
  };
}

/**
 * The trivial server, with its manifest written into `manifestDir`.
 * @param manifestDir a folder for manifests
 * @returns the server
 */
export async function trivialServer(manifestDir: string): Promise<UserServer> {
  await writeFile(join(manifestDir, `${TRIVIAL_SOURCE}.json`), JSON.stringify(trivialManifest(), null, 2));
  const script = fileURLToPath(new URL("./trivial-server.mjs", import.meta.url));
  return {
    serverId: TRIVIAL_SOURCE,
    sourceId: TRIVIAL_SOURCE,
    toolId: "lookup",
    mcpToolName: "lookup",
    modelName: `mcp__${TRIVIAL_SOURCE}__lookup`,
    command: { command: process.execPath, args: [script] },
    env: {},
    args: (index) => ({ id: `r${index}` }),
    check(result) {
      const [first] = result.content;
      if (result.isError || first?.type !== "text" || !first.text.startsWith('{"id"'))
        throw new Error(`lookup answered ${JSON.stringify(result).slice(0, 300)}`);
    },
  };
}

/** The sources server's id in the config; PubMed's manifest is rewritten to point at it. */
const SOURCES_SERVER = "sources";
/** Records each PubMed answer carries (the fake's esearch fixture lists two PMIDs). */
const RECORDS_PER_CALL = 2;

/**
 * The bundled sources server (PubMed only) against a loopback fake provider, governed with PubMed's own
 * manifest minus its rate limits (NCBI's 3 requests/s would time the limiter, not the governance).
 * @param manifestDir a folder for manifests
 * @returns the server and the fake provider (close it when done)
 */
export async function sourcesServer(
  manifestDir: string,
): Promise<{ server: UserServer; provider: FakeProviderServer }> {
  // Every query finds the fixture's two PMIDs, so distinct queries do the same work upstream.
  const anyQuery = {
    path: providerPath("pubmed", "eutils", "/esearch.fcgi"),
    file: join(PUBMED_FIXTURES, "esearch-crispr.json"),
  };
  const provider = await startFakeProviderServer({ routes: [anyQuery, ...pubmedFakeRoutes()] });
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
  const manifest = { ...pubmed, transport: { mcpServerId: SOURCES_SERVER }, governance };
  await writeFile(join(manifestDir, "pubmed.json"), JSON.stringify(manifest, null, 2));
  const server: UserServer = {
    serverId: SOURCES_SERVER,
    sourceId: "pubmed",
    toolId: "search",
    mcpToolName: "pubmed_search",
    modelName: "mcp__pubmed__search",
    command: sciencegateCommand(["serve", "sources", "--only", "pubmed"]),
    env: providerEnvFor(provider.url),
    args: (index) => ({ query: `bench query ${index}` }),
    check(result) {
      const records = (result.structuredContent as { records?: unknown[] } | undefined)?.records;
      if (result.isError || records?.length !== RECORDS_PER_CALL)
        throw new Error(`pubmed_search answered ${JSON.stringify(result).slice(0, 300)}`);
    },
  };
  return { server, provider };
}

/**
 * The `mcpServers` object of a config naming these servers (stdio, each with its environment).
 * @param servers the servers
 * @returns raw `extensions_config.json` content
 */
export function extensionsConfig(servers: readonly UserServer[]): { mcpServers: Record<string, unknown> } {
  return {
    mcpServers: Object.fromEntries(
      servers.map((s) => [
        s.serverId,
        { type: "stdio", command: s.command.command, args: s.command.args, env: s.env },
      ]),
    ),
  };
}

/** The runtime a user gets from `createGovernance` over the trivial server alone, and its governed call. */
export interface TrivialRuntime {
  trivial: UserServer;
  governance: Governance;
  /** One governed `lookup` (distinct arguments per index) in the session. */
  call(index: number): ReturnType<Governance["broker"]["invoke"]>;
}

/**
 * Writes the trivial server's manifest under a scratch folder and opens the runtime over it: SQLite and
 * the file CAS in `<scratch>/data`, or PostgreSQL when a URL is given.
 * @param scratch a fresh folder of the benchmark's
 * @param sessionId the session of every call
 * @param postgres a `postgres://` URL for the ledger, grants and jobs
 * @returns the runtime; close it with `governance.close()`
 */
export async function trivialRuntime(
  scratch: string,
  sessionId: string,
  postgres?: string,
): Promise<TrivialRuntime> {
  const manifests = join(scratch, "manifests");
  await mkdir(manifests);
  const trivial = await trivialServer(manifests);
  const governance = await createGovernance({
    config: extensionsConfig([trivial]),
    manifests: { dirs: [manifests] },
    storage: { ...(postgres === undefined ? {} : { postgres }), dataDir: join(scratch, "data") },
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
    mcp: { failOnError: true },
  });
  const call = (index: number) =>
    governance.broker.invoke({
      sourceId: trivial.sourceId,
      toolId: trivial.toolId,
      input: trivial.args(index),
      sessionId,
    });
  return { trivial, governance, call };
}

/**
 * Writes `extensions_config.json` for the servers into a folder.
 * @param dir the folder
 * @param servers the servers
 * @returns the file's path
 */
export async function writeExtensionsConfig(dir: string, servers: readonly UserServer[]): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, "extensions_config.json");
  await writeFile(path, JSON.stringify(extensionsConfig(servers), null, 2));
  return path;
}

/** A raw MCP SDK client on its own child of a server. */
export interface SdkClient {
  client: Client;
  /** The child's process id. */
  pid: number;
  close(): Promise<void>;
}

/**
 * Starts a child of the command and connects an MCP SDK client to it over stdio.
 * @param command the server command
 * @param env the child's environment (PATH and HOME are added)
 * @param cwd where the child runs
 * @returns the connected client
 * @throws Error with the child's stderr when it does not start
 */
export async function connectStdio(
  name: string,
  command: Command,
  env: Record<string, string>,
  cwd?: string,
): Promise<SdkClient & { stderr: () => string }> {
  const transport = new StdioClientTransport({
    ...command,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stderr: "pipe",
    ...(cwd === undefined ? {} : { cwd }),
  });
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
  const pid = transport.pid;
  if (pid === null) throw new Error(`${command.args.join(" ")} has no process id.`);
  return { client, pid, close: () => client.close(), stderr: () => stderr };
}

/** A scratch folder with both user servers and a direct SDK client of each; `close()` undoes it all. */
export interface UserServerBench {
  scratch: string;
  manifests: string;
  trivial: UserServer;
  sources: { server: UserServer; provider: FakeProviderServer };
  direct: { trivial: SdkClient; sources: SdkClient };
  /** Registers a step for `close()` (run in reverse order, failures ignored). */
  onClose(step: () => Promise<unknown>): void;
  close(): Promise<void>;
}

/**
 * Starts the trivial and the sources server with their manifests in a new scratch folder, and a direct
 * SDK client of each (the baseline every benchmark compares with).
 * @param prefix the scratch folder's name prefix
 * @param clientName the direct clients' name
 * @returns the servers and clients; on a failure, what started is closed before it throws
 */
export async function startUserServers(prefix: string, clientName: string): Promise<UserServerBench> {
  const scratch = await mkdtemp(join(tmpdir(), prefix));
  const closers: (() => Promise<unknown>)[] = [() => rm(scratch, { recursive: true, force: true })];
  const close = async () => {
    for (const step of closers.splice(0).reverse()) await step().catch(() => undefined);
  };
  try {
    const manifests = join(scratch, "manifests");
    await mkdir(manifests);
    const trivial = await trivialServer(manifests);
    const sources = await sourcesServer(manifests);
    closers.push(() => sources.provider.close());
    const directTrivial = await connectStdio(clientName, trivial.command, trivial.env);
    closers.push(() => directTrivial.close());
    const directSources = await connectStdio(clientName, sources.server.command, sources.server.env);
    closers.push(() => directSources.close());
    return {
      scratch,
      manifests,
      trivial,
      sources,
      direct: { trivial: directTrivial, sources: directSources },
      onClose: (step) => void closers.push(step),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
