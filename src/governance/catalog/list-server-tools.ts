/**
 * One server's `tools/list` for a catalog refresh, bounded in time: a failure becomes a reason
 * (with the server's last stderr lines) instead of an exception, so one bad server cannot fail a refresh.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Clock } from "../../core/index.js";
import type { ToolServerPool } from "../../mcp/index.js";

/** What listing one server gave: its live tools, or why there are none. */
export type ToolListing = { ok: true; tools: Tool[] } | { ok: false; reason: string };

/** Options of `listServerTools`. */
export interface ListServerToolsOptions {
  /** Times the wait. */
  clock: Clock;
  /** How long `tools/list` may take before the server counts as unavailable. */
  timeoutMs: number;
}

/**
 * Lists a server's live tools, giving up after `timeoutMs`.
 * @param pool the MCP server pool
 * @param serverId the server to list
 * @param options clock and timeout
 * @returns the tools, or `{ ok: false, reason }` naming the server, the failure and its stderr tail
 */
export async function listServerTools(
  pool: ToolServerPool,
  serverId: string,
  options: ListServerToolsOptions,
): Promise<ToolListing> {
  const { clock, timeoutMs } = options;
  const timeout = new AbortController();
  try {
    const timedOut = clock.sleep(timeoutMs, timeout.signal).then(() => {
      throw new Error(`no answer within ${timeoutMs} ms`);
    });
    return { ok: true, tools: await Promise.race([pool.listTools(serverId), timedOut]) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const tail = pool.state(serverId).stderrTail ?? [];
    const stderr = tail.length > 0 ? ` (stderr: ${tail.slice(-5).join(" | ")})` : "";
    return { ok: false, reason: `tools/list on server '${serverId}' failed: ${message}${stderr}` };
  } finally {
    timeout.abort();
  }
}
