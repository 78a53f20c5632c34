/**
 * The audit of what an operator changes with the CLI (`grants revoke`, `grants mode`, `jobs cancel`):
 * one authorization row per change with `decisionSource: "operator_cli"`, in the ledger of the data
 * directory or the database, as the console records its own changes (`operator_console`).
 */
import { join } from "node:path";
import { type ConsoleChange, recordConsoleChange } from "../console/index.js";
import type { PostgresDatabase } from "../core/index.js";
import { type LedgerStore, LedgerWriter, PostgresLedger, SqliteLedger } from "../governance/audit/index.js";
import {
  type GrantStore,
  grantStorePath,
  PostgresGrantStore,
  SqliteGrantStore,
} from "../governance/permissions/index.js";
import { resolveDataDir } from "../runtime/index.js";
import type { CliIo } from "./io.js";
import { withStateStore } from "./state-store.js";

/** The `decisionSource` of the rows the CLI writes for an operator's change. */
export const CLI_DECISION_SOURCE = "operator_cli";

/**
 * Appends the row of one CLI change, at the session's current permission epoch.
 * @param io the environment (data directory, `SCIENCEGATE_DATABASE_URL`)
 * @param change the session, source, object, action and resource
 * @param grants the grant store already open, if the command has it (for the epoch)
 */
export async function recordCliChange(
  io: Pick<CliIo, "env" | "cwd">,
  change: ConsoleChange,
  grants?: GrantStore,
): Promise<void> {
  const dataDir = resolveDataDir({ env: io.env, cwd: io.cwd });
  const record = (store: GrantStore) =>
    withStateStore(
      io,
      {
        path: join(dataDir, "ledger.sqlite"),
        sqlite: (file: string): Promise<LedgerStore> => SqliteLedger.open(file),
        postgres: (db: PostgresDatabase): Promise<LedgerStore> => PostgresLedger.open(db),
      },
      false,
      async (ledger) => {
        const ledgerWriter = new LedgerWriter(ledger as LedgerStore);
        try {
          await recordConsoleChange(
            { ledgerWriter, permissions: { epoch: (session) => store.currentEpoch(session) } },
            change,
            { decisionSource: CLI_DECISION_SOURCE },
          );
        } finally {
          await ledgerWriter.close();
        }
      },
    );
  if (grants) return record(grants);
  return withStateStore(
    io,
    {
      path: grantStorePath(dataDir),
      sqlite: (file: string): Promise<GrantStore> => SqliteGrantStore.open(file),
      postgres: (db: PostgresDatabase): Promise<GrantStore> => PostgresGrantStore.open(db),
    },
    false,
    (store) => record(store as GrantStore),
  );
}
