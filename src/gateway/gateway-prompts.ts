/**
 * Upstream prompts through the gateway: `prompts/list` gathers the prompts of every server whose
 * manifest does not deny them, and `prompts/get` forwards to the server that offers the name, under its
 * policy and with its ledger row (`governedSurfaceRequest`). A prompt keeps its server's name where no
 * other server offers one spelt the same; else it is `mcp__<source>__<name>` (accepted for any prompt).
 */
import { ErrorCode, McpError, type Prompt } from "@modelcontextprotocol/sdk/types.js";
import { neutralizeContentText, neutralizePromptTags } from "../governance/envelope/index.js";
import {
  governedSurfaceRequest,
  type SurfaceCaller,
  type SurfaceRuntime,
  type SurfaceServer,
  surfaceServers,
} from "./gateway-surface-policy.js";

/** One prompt as the gateway lists it, and where it comes from. */
interface ListedPrompt {
  prompt: Prompt;
  server: SurfaceServer;
  upstreamName: string;
}

/**
 * Every upstream prompt the caller may use, named for the gateway's clients.
 * @param runtime pool, catalog and ledger
 * @param caller session and principal (a row under `audited`)
 * @returns the prompts, server by server in config order
 */
export async function listGatewayPrompts(
  runtime: SurfaceRuntime,
  caller: SurfaceCaller,
): Promise<{ prompts: Prompt[] }> {
  return { prompts: (await listedPrompts(runtime, caller)).map((listed) => listed.prompt) };
}

/**
 * Gets one prompt from the server that offers it, under that server's policy (a ledger row per get).
 * @param runtime pool, catalog and ledger
 * @param caller session, principal, question and signal
 * @param params the client's `prompts/get` params
 * @returns the server's result
 * @throws McpError `InvalidParams` for a name no server offers, or a refused get; the server's error
 */
export async function getGatewayPrompt(
  runtime: SurfaceRuntime,
  caller: SurfaceCaller,
  params: { name: string; arguments?: Record<string, string> | undefined },
): Promise<Record<string, unknown>> {
  const target = await resolvePrompt(runtime, caller, params.name);
  if (target === undefined) {
    throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${params.name} (prompts/list names them).`);
  }
  const result = await governedSurfaceRequest(runtime, caller, {
    server: target.server,
    method: "prompts/get",
    name: target.upstreamName,
    params: { ...params, name: target.upstreamName },
  });
  return inertPrompt(result);
}

/**
 * A prompt's messages go into a model's context as a tool result's text does: the server's text in
 * them (and its description) is made inert the same way, its binary content passed as it is.
 */
function inertPrompt(result: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...result };
  if (typeof out.description === "string") out.description = neutralizePromptTags(out.description);
  if (Array.isArray(out.messages)) {
    out.messages = out.messages.map((message: unknown) =>
      typeof message === "object" && message !== null
        ? {
            ...(message as Record<string, unknown>),
            content: neutralizeContentText((message as { content?: unknown }).content),
          }
        : message,
    );
  }
  return out;
}

/**
 * The server and upstream name of a prompt name a client sent: the qualified form names its source; a
 * plain name goes to the one server offering prompts, else to the one that lists it.
 */
export async function resolvePrompt(
  runtime: SurfaceRuntime,
  caller: SurfaceCaller,
  name: string,
): Promise<{ server: SurfaceServer; upstreamName: string } | undefined> {
  const servers = await surfaceServers(runtime, "prompts");
  for (const server of servers) {
    const prefix = `mcp__${server.sourceId}__`;
    if (name.startsWith(prefix) && name.length > prefix.length) {
      return { server, upstreamName: name.slice(prefix.length) };
    }
  }
  // One server: its names are the gateway's, no listing needed (the common case costs no round trip).
  if (servers.length === 1) return { server: servers[0] as SurfaceServer, upstreamName: name };
  const listed = await listedPrompts(runtime, caller);
  const found = listed.find((entry) => entry.prompt.name === name);
  return found && { server: found.server, upstreamName: found.upstreamName };
}

async function listedPrompts(runtime: SurfaceRuntime, caller: SurfaceCaller): Promise<ListedPrompt[]> {
  const servers = await surfaceServers(runtime, "prompts");
  const lists = await Promise.all(
    servers.map(async (server) => {
      const result = await governedSurfaceRequest(runtime, caller, {
        server,
        method: "prompts/list",
        name: "*",
        params: {},
        isList: true,
      });
      const prompts = Array.isArray(result.prompts) ? (result.prompts as Prompt[]) : [];
      return prompts.map((prompt) => ({ prompt, server, upstreamName: prompt.name }));
    }),
  );
  const all = lists.flat();
  const count = new Map<string, number>();
  for (const entry of all) count.set(entry.upstreamName, (count.get(entry.upstreamName) ?? 0) + 1);
  return all.map((entry) =>
    (count.get(entry.upstreamName) ?? 0) > 1
      ? {
          ...entry,
          prompt: { ...entry.prompt, name: `mcp__${entry.server.sourceId}__${entry.upstreamName}` },
        }
      : entry,
  );
}
