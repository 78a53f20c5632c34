import { resolveToolName } from "../../adk/index.js";
import { GovernanceError, type PostgresDatabase } from "../../core/index.js";
import type {
  ApprovalMode,
  AuthorizationRequest,
  Grant,
  GrantStore,
} from "../../governance/permissions/index.js";
import {
  grantStorePath,
  PostgresGrantStore,
  PostgresSessionStateStore,
  SqliteGrantStore,
} from "../../governance/permissions/index.js";
import { resolveDataDir } from "../../runtime/index.js";
import type { CliIo, ExitCode } from "../io.js";
import { recordCliChange } from "../operator-audit.js";
import type { CliRuntime } from "../runtime.js";
import { withStateStore } from "../state-store.js";
import { terminalLine } from "../terminal-text.js";

/** The modes `sciencegate grants mode` sets. */
export const APPROVAL_MODES: readonly ApprovalMode[] = ["always_allow", "ask_for_dangerous"];

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
  if (revoked) {
    await recordCliChange(
      io,
      {
        sessionId: revoked.sessionId,
        sourceId: revoked.resource.split(":")[0] || "cli",
        toolId: "grant",
        action: "revoke_grant",
        resource: revoked.resource,
      },
      store,
    );
  }
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
      terminalLine`Revoked grant ${revoked.id} (${revoked.action} on ${revoked.resource}, session ${revoked.sessionId}); matching calls will ask again.\n`,
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
  // A grant's resource holds the call's arguments, its session a caller's id: printed inert.
  for (const g of grants) {
    io.stdout(
      terminalLine`${g.createdAt}  ${g.sessionId.padEnd(10)} ${g.action.padEnd(28)} ${g.resource.padEnd(28)} def=${g.toolDefinitionHash.slice(0, 12)} ${g.id}\n`,
    );
  }
  return 0;
}

/** Options of `sciencegate grants add`. */
export interface GrantAddOptions {
  session: string;
  /** `mcp__<source>__<tool>`, `source.tool` or a bare name only one source has. */
  tool: string;
  /** The grant scope (an approval card's `matchingScope.resource`). @default the tool-wide scope */
  resource?: string | undefined;
  json: boolean;
}

/**
 * `sciencegate grants add --session ID --tool NAME [--resource SCOPE]`: grants a session, out of band,
 * what `allow_matching` on the tool's card grants: one session grant bound to the tool's definition (the
 * live catalog of `--config`, as `sciencegate call` sees it) and one `user_grant` authorization row. A
 * running gateway on the same data directory (or database) honours it at its next call.
 * @param runtime the CLI runtime (its catalog gives the definition hash; its stores keep the grant)
 * @param io output
 * @param options session, tool, scope, output format
 * @returns 0
 * @throws GovernanceError `TOOL_UNAVAILABLE` for a tool the catalog cannot call; `INVALID_INPUT` for a
 *   scope the tool's cards never show
 */
export async function grantAddCommand(
  runtime: CliRuntime,
  io: CliIo,
  options: GrantAddOptions,
): Promise<ExitCode> {
  const { sourceId, toolId } = resolveToolName(runtime.catalog, options.tool);
  const tool = runtime.catalog.requireTool(sourceId, toolId);
  const source = runtime.catalog.source(sourceId);
  if (!source) throw new GovernanceError("TOOL_UNAVAILABLE", `Source '${sourceId}' is not in the catalog.`);
  const request: AuthorizationRequest = {
    sessionId: options.session,
    sourceId,
    toolId,
    source: source.manifest,
    tool: tool.manifest,
    definitionHash: tool.definitionHash,
    input: {},
  };
  // Without arguments the card's scope is the tool-wide default: a grant on it covers every call.
  const toolWide = runtime.permissions.cardFor(request).matchingScope;
  const scope = checkedScope(options, toolWide.resource, tool.manifest.permission.scopeTemplate);
  const { grant, authorizationId } = await runtime.permissions.grant(request, scope);
  if (!runtime.permissions.isDangerous(request)) {
    io.stderr(
      terminalLine`sciencegate grants: note: calls of ${options.tool} need no approval under the current policy.\n`,
    );
  }
  if (options.json) {
    io.stdout(`${JSON.stringify({ grant, authorizationId }, null, 2)}\n`);
    return 0;
  }
  const covers =
    scope === toolWide.resource ? toolWide.description : `every call whose grant scope is ${scope}`;
  io.stdout(
    terminalLine`Granted in session ${grant.sessionId}: ${covers} (grant ${grant.id}, definition ${grant.toolDefinitionHash.slice(0, 12)}, authorization ${authorizationId}).\n` +
      terminalLine`Revoke it with: sciencegate grants revoke ${grant.id}\n`,
  );
  return 0;
}

/** The tool-wide scope, or one of the form the tool's `scopeTemplate` renders. */
function checkedScope(options: GrantAddOptions, toolWide: string, scopeTemplate: string | undefined): string {
  const given = options.resource;
  if (given === undefined || given === toolWide) return toolWide;
  const prefix = scopeTemplate?.split("{")[0];
  if (prefix && given.startsWith(prefix) && given.length > prefix.length) return given;
  const forms = [`'${toolWide}' (every call of the tool)`];
  if (scopeTemplate)
    forms.push(`one of the form '${scopeTemplate}', as an approval card's matchingScope.resource shows it`);
  throw new GovernanceError(
    "INVALID_INPUT",
    `--resource '${given}' is not a grant scope of ${options.tool}: use ${forms.join(", or ")}.`,
    { data: { resource: given, toolWide } },
  );
}

/** Options of `sciencegate grants mode`. */
export interface GrantModeOptions {
  session: string;
  mode: ApprovalMode;
  json: boolean;
}

/**
 * `sciencegate grants mode --session ID always_allow|ask_for_dangerous`: sets a session's approval mode
 * in the shared session state of `SCIENCEGATE_DATABASE_URL`, which every process on that database
 * follows within milliseconds (a running gateway included).
 * @param io environment and output
 * @param options session, mode, output format
 * @returns 0
 * @throws GovernanceError `INVALID_CONFIG` without `SCIENCEGATE_DATABASE_URL`: with the SQLite data
 *   directory, approval modes live in the memory of the process that serves the session
 */
export async function grantModeCommand(io: CliIo, options: GrantModeOptions): Promise<ExitCode> {
  const openers = {
    path: grantStorePath(resolveDataDir({ env: io.env, cwd: io.cwd })),
    sqlite: (): Promise<PostgresSessionStateStore> => {
      throw new GovernanceError(
        "INVALID_CONFIG",
        "Approval modes are kept in the memory of the process that serves a session unless its session state " +
          "is in PostgreSQL: set SCIENCEGATE_DATABASE_URL to the gateway's database. With the SQLite data " +
          "directory, approve out of band with 'sciencegate grants add' (every process on the data directory " +
          "shares its grants), or set the mode in the app (governance.permissions.setApprovalMode).",
      );
    },
    postgres: (db: PostgresDatabase) => PostgresSessionStateStore.open(db),
  };
  return withStateStore(io, openers, false, async (store): Promise<ExitCode> => {
    await (store as PostgresSessionStateStore).setApprovalMode(options.session, options.mode);
    await recordCliChange(io, {
      sessionId: options.session,
      sourceId: "cli",
      toolId: "approval_mode",
      action: "set_approval_mode",
      resource: `mode:${options.mode}`,
    });
    if (options.json) io.stdout(`${JSON.stringify({ sessionId: options.session, mode: options.mode })}\n`);
    else io.stdout(terminalLine`Session ${options.session} is now ${options.mode}.\n`);
    return 0;
  });
}
