/**
 * The README's programmatic quick start, kept compiling by `npm test` (typecheck). Run it with
 * `npx tsx examples/quick-start.ts`; it calls the real PubMed unless SCIENCEGATE_PUBMED_BASE_URL points
 * elsewhere.
 */
import {
  Broker,
  builtinManifestDir,
  defaultExtensionsConfigJson,
  FileContentStore,
  loadExtensionsConfig,
  parseExtensionsConfig,
  RateLimiter,
  ServerPool,
  SourceCatalog,
  SourceRegistry,
  SqliteLedger,
} from "../src/index.js";

const loaded = await loadExtensionsConfig({});
const config = loaded.path ? loaded : parseExtensionsConfig(defaultExtensionsConfigJson(), {});
const pool = new ServerPool(config.servers);
const registry = await SourceRegistry.fromDirs([builtinManifestDir()]);
const catalog = new SourceCatalog({ registry, pool });
await catalog.start();

const broker = new Broker({
  catalog,
  pool,
  ledger: await SqliteLedger.open(".sciencegate/ledger.sqlite"),
  store: new FileContentStore(".sciencegate/cas"),
  limiter: new RateLimiter({ groups: registry.rateLimitGroups() }),
  authorize: async () => ({ allowed: true }),
});

try {
  const { invocationId, result } = await broker.invoke({
    sourceId: "pubmed",
    toolId: "search",
    input: { query: "BRAF V600E melanoma" },
    session: "thread-42",
    threadId: "thread-42",
    toolCallId: "call_1",
  });
  console.log(
    invocationId,
    result.records.map((r) => r.primaryCitation.label),
  );
} finally {
  catalog.stop();
  await pool.close();
}
