/**
 * The stores behind `createGovernance`: the app's own when it passes them, else PostgreSQL when
 * `storage` (or `SCIENCEGATE_DATABASE_URL`) names a database, else SQLite files in the data directory
 * (see ARCHITECTURE.md, "State: who owns what").
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import {
  type DownloadJobStore,
  downloadJobsPath,
  MemoryDownloadJobStore,
  PAPERS_DIR_NAME,
  PostgresDownloadJobStore,
  SqliteDownloadJobStore,
} from "../artifacts/index.js";
import {
  openPostgres,
  type PostgresDatabase,
  tightenPrivatePath,
  tightenPrivateTree,
  tightenSqliteFiles,
} from "../core/index.js";
import { LedgerSpool, type LedgerStore, PostgresLedger, SqliteLedger } from "../governance/audit/index.js";
import {
  type GrantStore,
  grantStorePath,
  MemoryGrantStore,
  PostgresGrantStore,
  SqliteGrantStore,
} from "../governance/permissions/index.js";
import type { GovernanceStorage } from "./governance-options.js";
import type { ResolvedGovernanceStorage } from "./resolve-governance-config.js";

/** The ledger, grants and jobs of one runtime, and the database they share (if any). */
export interface GovernanceStores {
  ledger: LedgerStore;
  /**
   * Where rows wait when the ledger's database stays unreachable: a folder of the data directory per
   * database, so that a spooled row is only ever replayed into the database it was meant for.
   * `undefined` for a local or the app's own ledger, which has no outage to bridge.
   */
  spool: LedgerSpool | undefined;
  grants: GrantStore;
  jobStore: DownloadJobStore;
  /**
   * The one pool the PostgreSQL stores and the shared rate limiter use, opened here and closed by
   * `Governance.close()` after them; `undefined` when no database is named.
   */
  database: PostgresDatabase | undefined;
}

/**
 * Opens the stores the app did not pass. Each one opened here (and the database) is handed to `own`,
 * so that a later failure of `createGovernance` closes it again.
 * @param options the app's `ledger`, `grants`, `jobStore` and `dataDir`
 * @param dataDir the resolved data directory
 * @param storage the resolved `storage`
 * @param own registers a resource to close when a later step fails
 * @returns the stores
 * @throws GovernanceError `UPSTREAM_UNAVAILABLE` when the database cannot be reached; `INVALID_CONFIG`
 *   when it holds a newer schema
 */
/** The content store's folder in the data directory. */
export const CAS_DIR_NAME = "cas";
/** The OAuth credentials' folder in the data directory (0700; one 0600 file per server). */
export const OAUTH_DIR_NAME = "oauth";
/** The downloads' folder in the data directory. */
export const WORKSPACE_DIR_NAME = "workspace";

/**
 * Makes an existing data directory private to this user, as new stores are made (0700 folders, 0600
 * files): the folder itself, its SQLite files, and the content store, downloads and extractions. A
 * store an earlier version left readable by others is tightened here once (see `tightenPrivateTree`).
 * Nothing else in the folder is touched, and a missing one is not created.
 * @param dataDir the data directory
 * @returns when done
 * @throws the file system's error
 */
async function tightenDataDir(dataDir: string): Promise<void> {
  await tightenPrivatePath(dataDir);
  for (const file of [join(dataDir, LEDGER_FILE), grantStorePath(dataDir), downloadJobsPath(dataDir)]) {
    await tightenSqliteFiles(file);
  }
  for (const folder of [CAS_DIR_NAME, WORKSPACE_DIR_NAME, PAPERS_DIR_NAME, OAUTH_DIR_NAME]) {
    await tightenPrivateTree(join(dataDir, folder));
  }
}

const LEDGER_FILE = "ledger.sqlite";

export async function openGovernanceStores(
  options: Pick<GovernanceStorage, "ledger" | "grants" | "jobStore" | "dataDir">,
  dataDir: string,
  storage: ResolvedGovernanceStorage,
  own: <T extends { close(): unknown }>(resource: T) => T,
): Promise<GovernanceStores> {
  const { postgres } = storage;
  // Every request, result, grant and paper lives below it: private, on upgrade too.
  await tightenDataDir(dataDir);
  // Opened whenever a database is named: besides the stores left to it, the rate limits live there.
  const database = postgres
    ? own(await openPostgres(postgres.url, { maxConnections: postgres.maxConnections }))
    : undefined;
  // An in-memory setup (the app's own ledger, no data directory) leaves no files behind.
  const inMemory = options.ledger !== undefined && !options.dataDir;
  const ledger =
    options.ledger ??
    own(database ? await PostgresLedger.open(database) : await SqliteLedger.open(join(dataDir, LEDGER_FILE)));
  const grants =
    options.grants ??
    (database
      ? // Epochs skip their own log flush only when the rows that carry them commit on this database.
        own(await PostgresGrantStore.open(database, { epochsCommitWithLedger: options.ledger === undefined }))
      : inMemory
        ? new MemoryGrantStore()
        : own(await SqliteGrantStore.open(grantStorePath(dataDir))));
  const jobStore =
    options.jobStore ??
    (database
      ? own(await PostgresDownloadJobStore.open(database))
      : inMemory
        ? new MemoryDownloadJobStore()
        : own(await SqliteDownloadJobStore.open(downloadJobsPath(dataDir))));
  const spool =
    database && options.ledger === undefined && postgres
      ? new LedgerSpool(join(dataDir, "ledger-spool", databaseKey(postgres.url)))
      : undefined;
  return { ledger, grants, spool, jobStore, database };
}

/**
 * A database's name in the spool: a digest of its URL without the credentials (host, port, database,
 * options such as `search_path`), so that each database has its own folder and no secret is on disk.
 */
function databaseKey(url: string): string {
  let named = url;
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    named = parsed.toString();
  } catch {
    // A URL the WHATWG parser refuses but pg accepts: its digest names it all the same.
  }
  return `postgres-${createHash("sha256").update(named).digest("hex").slice(0, 16)}`;
}
