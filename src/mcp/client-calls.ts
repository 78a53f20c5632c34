/**
 * The MCP SDK client calls every pool makes the same way: a tool call with the pool's timeout,
 * signal and progress, and a paged `tools/list` that cannot loop forever.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { GovernanceError } from "../core/index.js";
import { withResponseCap } from "./response-cap.js";
import type { PoolCallOptions } from "./types.js";

/** Most `tools/list` pages read before a server counts as looping. */
const MAX_PAGES = 1000;

/**
 * The error of a server that cannot be reached or used.
 * @param id server id
 * @param reason what went wrong
 * @param cause the underlying error
 * @returns a retryable `UPSTREAM_UNAVAILABLE` naming the server
 */
export function serverUnavailable(id: string, reason: string, cause?: unknown): GovernanceError {
  return new GovernanceError("UPSTREAM_UNAVAILABLE", `MCP server '${id}' is unavailable: ${reason}`, {
    retryable: true,
    ...(cause === undefined ? {} : { cause }),
    data: { serverId: id },
  });
}

/**
 * Calls one tool with the pool's options.
 * @param client a connected SDK client
 * @param name the MCP tool name
 * @param args its arguments
 * @param options timeout, abort signal, progress listener and response cap
 * @returns the SDK's result (errors of the tool are `isError` results, not throws)
 * @throws GovernanceError `RESPONSE_TOO_LARGE` when an HTTP answer crossed `maxResponseBytes` while it was
 *   read (the SDK then also sends `notifications/cancelled`); the SDK's errors otherwise
 */
export async function callClientTool(
  client: Pick<Client, "callTool">,
  name: string,
  args: Record<string, unknown>,
  options: PoolCallOptions = {},
): Promise<CallToolResult> {
  const { timeoutMs, signal, onProgress, maxResponseBytes } = options;
  const call = (callSignal: AbortSignal | undefined) =>
    client.callTool({ name, arguments: args }, undefined, {
      ...(timeoutMs === undefined ? {} : { timeout: timeoutMs }),
      ...(callSignal === undefined ? {} : { signal: callSignal }),
      ...(onProgress === undefined
        ? {}
        : {
            onprogress: ({ progress, total, message }) =>
              onProgress({
                progress,
                ...(total === undefined ? {} : { total }),
                ...(message === undefined ? {} : { message }),
              }),
          }),
    });
  if (maxResponseBytes === undefined) {
    // The default result schema yields CallToolResult; the SDK's types also admit the legacy `toolResult` form.
    return (await call(signal)) as CallToolResult;
  }
  // Aborting cancels the request at the server; the SDK then rejects with a timeout McpError that wraps
  // the reason, so the cap's own error is rethrown instead.
  // The caller's abort is forwarded by hand: AbortSignal.any costs more than the rest of the call's
  // bookkeeping together.
  const crossed = new AbortController();
  const forward = () => crossed.abort(signal?.reason);
  if (signal?.aborted) forward();
  else signal?.addEventListener("abort", forward, { once: true });
  let capped = false;
  try {
    const result = await withResponseCap(
      maxResponseBytes,
      (error) => {
        capped = true;
        crossed.abort(error);
      },
      () => call(crossed.signal),
    );
    return result as CallToolResult;
  } catch (error) {
    throw capped ? crossed.signal.reason : error;
  } finally {
    signal?.removeEventListener("abort", forward);
  }
}

/**
 * Lists every tool, page by page, until the server stops giving a new cursor.
 * @param client a connected SDK client
 * @param id server id, for the error
 * @returns all tools
 * @throws GovernanceError `UPSTREAM_UNAVAILABLE` after {@link MAX_PAGES} pages
 */
export async function listAllTools(client: Pick<Client, "listTools">, id: string): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...result.tools);
    if (result.nextCursor === undefined || result.nextCursor === cursor) return tools;
    cursor = result.nextCursor;
  }
  throw serverUnavailable(id, `tools/list did not end after ${MAX_PAGES} pages`);
}
