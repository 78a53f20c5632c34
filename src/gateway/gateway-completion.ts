/**
 * `completion/complete` and `logging/setLevel` through the gateway. A completion of a prompt's
 * argument goes to the server of that prompt (by its gateway name), of a resource template's to the
 * server of that template; `logging/setLevel` goes to every server that declares logging, and the
 * level also filters the log messages the gateway relays to its client. Each is governed and recorded
 * by `governedSurfaceRequest` under the server's `completion` / `logging` policy.
 */
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import { resolvePrompt } from "./gateway-prompts.js";
import {
  governedSurfaceRequest,
  type SurfaceCaller,
  type SurfaceRuntime,
  surfaceServerOf,
  surfaceServers,
} from "./gateway-surface-policy.js";
import { resourceServerOf } from "./gateway-upstream-resources.js";

/** The answer when no server can complete: no values (MCP's empty completion). */
const NO_COMPLETION = { completion: { values: [], hasMore: false } };

/** The `completion/complete` params the gateway reads. */
export interface CompleteParams {
  ref: { type: string; name?: string | undefined; uri?: string | undefined };
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> | undefined } | undefined;
}

/**
 * Completes an argument of an upstream prompt or resource template.
 * @param runtime pool, catalog and ledger
 * @param caller session, principal, question and signal
 * @param params the client's params
 * @returns the server's completion, or no values when no server offers the prompt or template
 */
export async function completeGateway(
  runtime: SurfaceRuntime,
  caller: SurfaceCaller,
  params: CompleteParams,
): Promise<Record<string, unknown>> {
  const { ref } = params;
  let target: { serverId: string; ref: CompleteParams["ref"]; name: string } | undefined;
  if (ref.type === "ref/prompt" && typeof ref.name === "string") {
    const prompt = await resolvePrompt(runtime, caller, ref.name);
    if (prompt) {
      target = {
        serverId: prompt.server.serverId,
        ref: { ...ref, name: prompt.upstreamName },
        name: prompt.upstreamName,
      };
    }
  } else if (ref.type === "ref/resource" && typeof ref.uri === "string") {
    const server = await resourceServerOf(runtime, caller, ref.uri);
    if (server) target = { serverId: server.serverId, ref, name: ref.uri };
  }
  if (target === undefined) return NO_COMPLETION;
  const server = surfaceServerOf(runtime, target.serverId, "completion");
  const declares = (await surfaceServers(runtime, "completion")).some((s) => s.serverId === server.serverId);
  if (!declares && server.policy !== "denied") return NO_COMPLETION;
  return governedSurfaceRequest(runtime, caller, {
    server,
    method: "completion/complete",
    name: `${target.name}#${params.argument.name}`,
    params: { ...params, ref: target.ref },
  });
}

/**
 * Sets the log level of every server that declares logging (each a ledger row).
 * @param runtime pool, catalog and ledger
 * @param caller session, principal, question and signal
 * @param level the client's level
 * @returns the empty result, once every server answered (a server's failure is the client's error)
 */
export async function setGatewayLogLevel(
  runtime: SurfaceRuntime,
  caller: SurfaceCaller,
  level: LoggingLevel,
): Promise<Record<string, never>> {
  const servers = await surfaceServers(runtime, "logging");
  await Promise.all(
    servers.map((server) =>
      governedSurfaceRequest(runtime, caller, {
        server,
        method: "logging/setLevel",
        name: level,
        params: { level },
      }),
    ),
  );
  return {};
}

/** MCP's levels, least severe first (RFC 5424 order). */
const LEVELS: readonly LoggingLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

/**
 * Whether a message at `level` reaches a client that set `threshold`.
 * @param level the message's level
 * @param threshold the client's level, `undefined` when it set none (everything is sent)
 */
export function isLogLevelShown(level: LoggingLevel, threshold: LoggingLevel | undefined): boolean {
  if (threshold === undefined) return true;
  return LEVELS.indexOf(level) >= LEVELS.indexOf(threshold);
}
