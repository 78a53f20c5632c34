/**
 * Which MCP servers a governance runtime starts: the extensions config (given, found, or the bundled
 * science sources) plus the servers of its extensions; and where it keeps its state.
 */
import {
  defaultExtensionsConfigJson,
  type ExtensionsConfig,
  loadExtensionsConfig,
  parseExtensionsConfig,
} from "../config/index.js";
import { GovernanceError } from "../core/index.js";
import type { GovernanceOptions } from "./governance-options.js";

/** What `resolveGovernanceConfig` found. */
export interface ResolvedGovernanceConfig {
  /** Every server: the extensions config's, then the extensions' servers. */
  config: ExtensionsConfig;
}

/**
 * Resolves the servers of `createGovernance`: `options.config` by the `--config` rules, then the
 * servers of `options.extensions`.
 * @param options the `config` and `extensions` options of `createGovernance`
 * @param env environment for config substitution
 * @param cwd working directory for relative paths
 * @returns the merged config
 * @throws GovernanceError `INVALID_CONFIG` naming the file and the problem
 */
export async function resolveGovernanceConfig(
  options: Pick<GovernanceOptions, "config" | "extensions">,
  env: Record<string, string | undefined>,
  cwd: string,
): Promise<ResolvedGovernanceConfig> {
  const extensions = options.extensions ?? [];
  const standalone = extensions.some((e) => e.standalone === true);
  const given = options.config;
  let base: ExtensionsConfig;
  if (typeof given === "string") base = await loadExtensionsConfig({ configPath: given, env, cwd });
  else if (given && "servers" in given) base = given;
  else if (given) base = parseExtensionsConfig(given, { env });
  else {
    const found = await loadExtensionsConfig({ env, cwd });
    // No config file anywhere: the bundled science sources, unless an extension stands on its own.
    base =
      found.path !== undefined || standalone
        ? found
        : parseExtensionsConfig(defaultExtensionsConfigJson(), { env });
  }
  const servers = extensions.flatMap((e) => e.servers);
  const config = servers.length === 0 ? base : { ...base, servers: [...base.servers, ...servers] };
  return { config };
}

/** Where `createGovernance` keeps its state, checked: a PostgreSQL URL and pool bound, or SQLite files. */
export interface ResolvedGovernanceStorage {
  /** The database of the ledger, grants and download jobs; `undefined` for SQLite in the data directory. */
  postgres: { url: string; maxConnections: number; rateLimitLeaseTtlMs: number | undefined } | undefined;
}

/** The pool bound when `storage.maxConnections` is not given (that of `openPostgres`). */
const DEFAULT_MAX_CONNECTIONS = 10;

/** The shortest lease TTL `storage.rateLimitLeaseTtlMs` accepts (the heartbeat renews every third of it). */
const MIN_LEASE_TTL_MS = 1_000;

/**
 * Resolves `storage`: its `postgres` URL, else `SCIENCEGATE_DATABASE_URL` (empty strings are absent).
 * @param options the `storage` option of `createGovernance`
 * @param env environment to read `SCIENCEGATE_DATABASE_URL` from
 * @returns the database and its pool bound, or SQLite
 * @throws GovernanceError `INVALID_CONFIG` for a `maxConnections` that is not a positive integer or a
 *   `rateLimitLeaseTtlMs` below 1000, or either one given without a database
 */
export function resolveGovernanceStorage(
  options: Pick<GovernanceOptions, "storage">,
  env: Record<string, string | undefined>,
): ResolvedGovernanceStorage {
  const { storage } = options;
  const url = nonEmpty(storage?.postgres) ?? nonEmpty(env.SCIENCEGATE_DATABASE_URL);
  const maxConnections = storage?.maxConnections;
  if (maxConnections !== undefined && (!Number.isSafeInteger(maxConnections) || maxConnections < 1)) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `storage.maxConnections must be a positive integer (connections in the PostgreSQL pool); got ${String(maxConnections)}.`,
    );
  }
  const rateLimitLeaseTtlMs = storage?.rateLimitLeaseTtlMs;
  if (
    rateLimitLeaseTtlMs !== undefined &&
    (!Number.isSafeInteger(rateLimitLeaseTtlMs) || rateLimitLeaseTtlMs < MIN_LEASE_TTL_MS)
  ) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `storage.rateLimitLeaseTtlMs must be a whole number of ms, at least ${MIN_LEASE_TTL_MS} (a shorter TTL lets a live replica's leases expire between its heartbeats); got ${String(rateLimitLeaseTtlMs)}.`,
    );
  }
  if (url === undefined && maxConnections !== undefined) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      "storage.maxConnections bounds the PostgreSQL pool, but no database is set: give storage.postgres or SCIENCEGATE_DATABASE_URL.",
    );
  }
  if (url === undefined && rateLimitLeaseTtlMs !== undefined) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      "storage.rateLimitLeaseTtlMs sets the lease TTL of the rate limits shared in PostgreSQL, but no database is set: give storage.postgres or SCIENCEGATE_DATABASE_URL.",
    );
  }
  return {
    postgres:
      url === undefined
        ? undefined
        : { url, maxConnections: maxConnections ?? DEFAULT_MAX_CONNECTIONS, rateLimitLeaseTtlMs },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
