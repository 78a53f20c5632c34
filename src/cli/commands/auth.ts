import { join } from "node:path";
import type { ServerConfig } from "../../config/index.js";
import { GovernanceError, openPostgres, redactUrl, systemClock } from "../../core/index.js";
import {
  beginAuthorization,
  type CredentialSummary,
  createLoopbackCallback,
  FileCredentialStore,
  type OAuthCredentialStore,
  PostgresCredentialStore,
  waitForCallback,
} from "../../mcp/index.js";
import { resolveDataDir, resolveGovernanceConfig, resolveGovernanceStorage } from "../../runtime/index.js";
import type { CliIo, ExitCode } from "../io.js";
import { terminalLine } from "../terminal-text.js";

/** Options of `sciencegate auth`. */
export interface AuthCommandOptions {
  /** The server to authorize; absent with `status`. */
  server?: string | undefined;
  /** List what is stored instead. */
  status: boolean;
  /** Forget the server's stored credentials instead. */
  forget: boolean;
  configPath?: string | undefined;
  /** Scopes to ask for beyond those the server names. */
  scope?: string | undefined;
  /** How long to wait for the browser, in seconds. @default 300 */
  timeoutSeconds?: number | undefined;
  json: boolean;
}

/**
 * `sciencegate auth <server>`: obtains OAuth tokens for a protected http/sse server and stores them
 * (`<dataDir>/oauth/<server>.json`, 0600, or PostgreSQL with `SCIENCEGATE_DATABASE_URL`): a client
 * credentials server at once; otherwise it prints the authorization page to open and waits for the
 * browser on a loopback callback. `--status` lists what is stored (never a token), `--forget` removes it.
 * Needs no other server running.
 * @param io streams, environment and working directory
 * @param options the server, the subcommand and the output format
 * @returns 0 once authorized (or listed, or forgotten)
 * @throws GovernanceError `UNKNOWN_ID` for a server not in the configuration, `INVALID_CONFIG` for a
 *   stdio or `oauth: false` server, `UNAUTHORIZED` when the authorization failed, `TIMEOUT` when nobody
 *   came back in time
 */
export async function authCommand(io: CliIo, options: AuthCommandOptions): Promise<ExitCode> {
  const { config } = await resolveGovernanceConfig(
    { ...(options.configPath ? { config: options.configPath } : {}) },
    io.env,
    io.cwd,
  );
  return withCredentialStore(io, async (store, where) => {
    if (options.status) return printStatus(io, await store.list(), config.servers, options.json);
    const server = config.servers.find((candidate) => candidate.id === options.server);
    if (server === undefined) {
      const protectable = config.servers.filter((s) => s.transport !== "stdio").map((s) => s.id);
      throw new GovernanceError(
        "UNKNOWN_ID",
        `No MCP server '${options.server ?? ""}' in the configuration (http/sse servers: ${protectable.join(", ") || "none"}).`,
      );
    }
    if (options.forget) {
      await store.delete({ serverId: server.id });
      io.stdout(
        options.json
          ? `${JSON.stringify({ forgotten: server.id })}\n`
          : terminalLine`Forgot the credentials of '${server.id}'.\n`,
      );
      return 0;
    }
    await authorize(io, server, store, options);
    io.stdout(
      options.json
        ? `${JSON.stringify({ authorized: server.id, stored: where })}\n`
        : terminalLine`Authorized: the tokens of '${server.id}' are stored in ${where}.\n`,
    );
    return 0;
  });
}

async function authorize(
  io: CliIo,
  server: ServerConfig,
  store: OAuthCredentialStore,
  options: AuthCommandOptions,
): Promise<void> {
  const redirect = server.oauth ? server.oauth.redirectUri : undefined;
  const callback = await createLoopbackCallback({ redirectUri: redirect });
  try {
    const begun = await beginAuthorization({
      server,
      store,
      redirectUri: callback.redirectUri,
      scope: options.scope,
      env: io.env,
    });
    if (begun.status === "authorized") return;
    const seconds = options.timeoutSeconds ?? 300;
    const url = begun.pending.url.href;
    // stderr: stdout stays the command's result (and its --json).
    io.stderr(terminalLine`Open this page in a browser to authorize '${server.id}':\n\n  ${url}\n\n`);
    io.stderr(
      terminalLine`Waiting up to ${String(seconds)} s for the browser to come back to ${callback.redirectUri} ...\n`,
    );
    const received = await waitForCallback(callback, systemClock, seconds * 1000);
    await begun.pending.complete(received);
  } finally {
    await callback.close();
  }
}

/** Runs `work` with the credential store the runtime would use, then closes what it opened. */
async function withCredentialStore(
  io: CliIo,
  work: (store: OAuthCredentialStore, where: string) => Promise<ExitCode>,
): Promise<ExitCode> {
  const { postgres } = resolveGovernanceStorage({}, io.env);
  if (postgres === undefined) {
    const dir = join(resolveDataDir({ env: io.env, cwd: io.cwd }), "oauth");
    return work(new FileCredentialStore(dir), dir);
  }
  const db = await openPostgres(postgres.url, { maxConnections: 2 });
  try {
    return await work(await PostgresCredentialStore.open(db), `PostgreSQL ${db.label}`);
  } finally {
    await db.close();
  }
}

function printStatus(
  io: CliIo,
  stored: CredentialSummary[],
  servers: readonly ServerConfig[],
  json: boolean,
): ExitCode {
  const protectable = servers.filter((server) => server.transport !== "stdio" && server.oauth !== false);
  const rows = protectable.map((server) => {
    const found = stored.find((entry) => entry.serverId === server.id && entry.serverUrl === server.url);
    return {
      server: server.id,
      url: redactUrl(server.url ?? ""),
      ...(found ? summary(found) : { authorized: false }),
    };
  });
  if (json) {
    io.stdout(`${JSON.stringify({ servers: rows })}\n`);
    return 0;
  }
  if (rows.length === 0) io.stdout("No http or sse server in the configuration.\n");
  for (const row of rows) {
    const state = !row.authorized
      ? "not authorized"
      : [
          "authorized",
          "scope" in row && row.scope ? `scope ${row.scope}` : undefined,
          "expiresAt" in row && row.expiresAt
            ? `access token until ${new Date(row.expiresAt).toISOString()}`
            : undefined,
          "refreshable" in row && row.refreshable ? "refreshable" : undefined,
        ]
          .filter(Boolean)
          .join(", ");
    io.stdout(terminalLine`${row.server}  ${row.url}  ${state}\n`);
  }
  return 0;
}

function summary(entry: CredentialSummary) {
  return {
    authorized: entry.hasAccessToken,
    refreshable: entry.hasRefreshToken,
    ...(entry.scope === undefined ? {} : { scope: entry.scope }),
    ...(entry.expiresAt === undefined ? {} : { expiresAt: entry.expiresAt }),
    ...(entry.issuer === undefined ? {} : { issuer: entry.issuer }),
  };
}
