/**
 * What a runtime says about the servers that did not start: one warning per server (the app sees it in
 * `governance.warnings`, the CLI on stderr), or, when the app asked for it, one error naming them all.
 */
import { GovernanceError } from "../core/index.js";
import type { CatalogSnapshot } from "../governance/catalog/index.js";
import type { ToolServerPool } from "../mcp/index.js";

/** A configured server whose tools could not be listed at start, and why. */
export interface ServerStartFailure {
  serverId: string;
  /**
   * The pool's reason with the server's last stderr lines (e.g. `could not be started: spawn nodee
   * ENOENT`), else the listing's (e.g. no answer in time).
   */
  reason: string;
}

/**
 * The servers of the first snapshot that did not start or answer.
 * @param snapshot the catalog's first snapshot
 * @param pool the pool, whose reason is the shorter one when the server failed to start
 * @returns one entry per server, in config order
 */
export function serverStartFailures(snapshot: CatalogSnapshot, pool: ToolServerPool): ServerStartFailure[] {
  return snapshot.unavailableServers.map(({ serverId, reason }) => {
    const state = pool.state(serverId);
    if (state.status !== "failed" || state.reason === undefined) return { serverId, reason };
    // What the server itself said before it died is often the real reason ("missing licence key").
    const tail = state.stderrTail ?? [];
    const stderr = tail.length > 0 ? ` (stderr: ${tail.slice(-5).join(" | ")})` : "";
    return { serverId, reason: `${state.reason}${stderr}` };
  });
}

/**
 * One `warning: server '<id>' unavailable: <reason>` line per failure.
 * @param failures the failures
 * @param named servers whose extension words its own warning (the Science ADK's providers)
 * @returns the lines, without newline
 */
export function serverStartWarnings(
  failures: readonly ServerStartFailure[],
  named: ReadonlySet<string>,
): string[] {
  return failures
    .filter((f) => !named.has(f.serverId))
    .map((f) => `warning: server '${f.serverId}' unavailable: ${f.reason}`);
}

/**
 * The error of `mcp.failOnError` (and of a config's `throwOnLoadError: true`).
 * @param failures at least one failure
 * @returns `UPSTREAM_UNAVAILABLE` naming every server and its reason, `data.servers` listing them
 */
export function serverStartError(failures: readonly ServerStartFailure[]): GovernanceError {
  const list = failures.map((f) => `'${f.serverId}' (${f.reason})`).join("; ");
  const count = failures.length === 1 ? "1 MCP server" : `${failures.length} MCP servers`;
  return new GovernanceError(
    "UPSTREAM_UNAVAILABLE",
    `${count} could not start: ${list}. Fix the command or URL in the config, or drop mcp.failOnError ` +
      "(throwOnLoadError) to start without it and see it in governance.warnings.",
    { data: { servers: failures } },
  );
}
