import { join } from "node:path";
import { defaultExtensionsConfigJson } from "../config/default-config.js";
import { loadExtensionsConfig, parseExtensionsConfig } from "../config/extensions-config.js";
import type { ExtensionsConfig } from "../config/types.js";
import { Broker } from "../governance/broker.js";
import { FileContentStore } from "../governance/content-store.js";
import { resolveDataDir } from "../governance/data-dir.js";
import type { Ledger } from "../governance/ledger.js";
import { builtinManifestDir } from "../governance/manifest-loader.js";
import { RateLimiter } from "../governance/rate-limiter.js";
import { SourceCatalog } from "../governance/source-catalog.js";
import { SourceRegistry } from "../governance/source-registry.js";
import { SqliteLedger } from "../governance/sqlite-ledger.js";
import { ServerPool } from "../mcp/server-pool.js";
import type { CliIo } from "./io.js";

/** The pieces a CLI command works with. */
export interface CliRuntime {
  config: ExtensionsConfig;
  /** Where the config came from: a file path, or "(built-in default)". */
  configSource: string;
  pool: ServerPool;
  registry: SourceRegistry;
  catalog: SourceCatalog;
  /** The data directory (`SCIENCEGATE_HOME`, default `./.sciencegate`). */
  dataDir: string;
  /** Opens (once) the SQLite ledger under the data directory. */
  ledger(): Promise<Ledger>;
  /** Builds (once) the broker over the pool, catalog, ledger and file CAS. */
  broker(): Promise<Broker>;
  close(): Promise<void>;
}

/**
 * Loads the configuration (`--config`, env, `./extensions_config.json`, else the built-in default
 * that starts the bundled sources), the manifests and the server pool.
 * @throws GovernanceError `INVALID_CONFIG` / `INVALID_MANIFEST` naming the file and the problem
 */
export async function openRuntime(
  io: CliIo,
  options: { configPath?: string; manifestDirs?: string[] },
): Promise<CliRuntime> {
  let config: ExtensionsConfig;
  let configSource: string;
  const loaded = await loadExtensionsConfig({
    env: io.env,
    cwd: io.cwd,
    ...(options.configPath ? { configPath: options.configPath } : {}),
  });
  if (loaded.path === undefined) {
    config = parseExtensionsConfig(defaultExtensionsConfigJson(), { env: io.env });
    configSource = "(built-in default)";
  } else {
    config = loaded;
    configSource = loaded.path;
  }
  const registry = await SourceRegistry.fromDirs([builtinManifestDir(), ...(options.manifestDirs ?? [])]);
  const pool = new ServerPool(config.servers, { env: io.env });
  const catalog = new SourceCatalog({ registry, pool });
  const dataDir = resolveDataDir({ env: io.env, cwd: io.cwd });
  let ledger: Promise<SqliteLedger> | undefined;
  let broker: Promise<Broker> | undefined;
  const openLedger = () => {
    ledger ??= SqliteLedger.open(join(dataDir, "ledger.sqlite"));
    return ledger;
  };
  return {
    config,
    configSource,
    pool,
    registry,
    catalog,
    dataDir,
    ledger: openLedger,
    broker: () => {
      broker ??= (async () => {
        await catalog.refresh();
        return new Broker({
          catalog,
          pool,
          ledger: await openLedger(),
          store: new FileContentStore(join(dataDir, "cas")),
          limiter: new RateLimiter({ groups: registry.rateLimitGroups() }),
        });
      })();
      return broker;
    },
    close: async () => {
      catalog.stop();
      await pool.close();
      if (ledger) await (await ledger).close();
    },
  };
}
