import { GovernanceError, type PostgresDatabase } from "../../core/index.js";
import type { Grant, GrantStore } from "../../governance/permissions/index.js";
import { grantStorePath, PostgresGrantStore, SqliteGrantStore } from "../../governance/permissions/index.js";
import { resolveDataDir } from "../../runtime/index.js";
import type { CliIo, ExitCode } from "../io.js";
import { withStateStore } from "../state-store.js";

/** Options of `sciencegate grants`. */
export interface GrantsCommandOptions {
  /** `list` (default) or `revoke`. */
  action: "list" | "revoke";
  /** The grant to revoke. */
  id?: string;
  /** Only this session's grants. */
  session?: string;
  json: boolean;
}

/**
 * `sciencegate grants [list|revoke ID] [--session ID] [--json]`: the session grants of the data
 * directory (`$SCIENCEGATE_HOME` or `./.sciencegate`, as `audit` reads it), or of the database
 * `SCIENCEGATE_DATABASE_URL` names, and their revocation.
 * Needs no MCP server. `--json` prints `{grants: [...]}` for `list` and `{revoked: grant}` for `revoke`.
 * @param io streams, environment and working directory
 * @param options the subcommand, grant id, session filter and output format
 * @returns 0
 * @throws GovernanceError `UNKNOWN_ID` when `revoke` names no grant (of `--session`, when given)
 */
export async function grantsCommand(io: CliIo, options: GrantsCommandOptions): Promise<ExitCode> {
  const path = grantStorePath(resolveDataDir({ env: io.env, cwd: io.cwd }));
  const openers = {
    path,
    sqlite: (file: string): Promise<GrantStore> => SqliteGrantStore.open(file),
    postgres: (db: PostgresDatabase): Promise<GrantStore> => PostgresGrantStore.open(db),
  };
  return withStateStore(io, openers, options.action === "list", async (store) => {
    const scope = options.session === undefined ? {} : { sessionId: options.session };
    if (options.action === "list") return printGrants(io, store ? await store.list(scope) : [], options.json);
    return revoke(io, store as GrantStore, options.id ?? "", scope, options.json);
  });
}

async function revoke(
  io: CliIo,
  store: GrantStore,
  id: string,
  scope: { sessionId?: string },
  json: boolean,
): Promise<ExitCode> {
  const inScope = (await store.list(scope)).some((grant) => grant.id === id);
  const revoked = inScope ? await store.revoke(id) : undefined;
  if (!revoked) {
    const where = scope.sessionId === undefined ? "" : ` in session '${scope.sessionId}'`;
    throw new GovernanceError(
      "UNKNOWN_ID",
      `No grant '${id}'${where}; see sciencegate grants list${where ? ` --session ${scope.sessionId}` : ""}.`,
      { data: { id } },
    );
  }
  if (json) io.stdout(`${JSON.stringify({ revoked }, null, 2)}\n`);
  else {
    io.stdout(
      `Revoked grant ${revoked.id} (${revoked.action} on ${revoked.resource}, session ${revoked.sessionId}); matching calls will ask again.\n`,
    );
  }
  return 0;
}

function printGrants(io: CliIo, grants: Grant[], json: boolean): ExitCode {
  if (json) {
    const rows = grants.map(({ id, action, resource, sessionId, createdAt, toolDefinitionHash }) => ({
      id,
      action,
      resource,
      sessionId,
      createdAt,
      toolDefinitionHash,
    }));
    io.stdout(`${JSON.stringify({ grants: rows }, null, 2)}\n`);
    return 0;
  }
  if (grants.length === 0) {
    io.stdout("No grants.\n");
    return 0;
  }
  io.stdout(`${grants.length} grant(s):\n`);
  for (const g of grants) {
    io.stdout(
      `${g.createdAt}  ${g.sessionId.padEnd(10)} ${g.action.padEnd(28)} ${g.resource.padEnd(28)} def=${g.toolDefinitionHash.slice(0, 12)} ${g.id}\n`,
    );
  }
  return 0;
}
