/**
 * The governance of the server surface beyond tools that the gateway forwards (prompts, resources,
 * templates, subscriptions, completion, log level): which servers offer each part to clients (the
 * source manifest's `surface` policy), the question a read under `approval` asks, and the ledger row
 * each read writes (see ARCHITECTURE.md, "The governed MCP gateway"). Independent of any transport:
 * every function takes the runtime, the caller and the request's params.
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { type Clock, GovernanceError, isGovernanceError, systemClock } from "../core/index.js";
import type { Broker } from "../governance/broker/index.js";
import type { SourceCatalog } from "../governance/catalog/index.js";
import { neutralizeDeep, neutralizePromptTags } from "../governance/envelope/index.js";
import { derivedSourceId, type SurfacePolicy } from "../governance/manifests/index.js";
import type { SurfaceMethod, ToolServerPool } from "../mcp/index.js";
import { SurfaceInputRequired } from "./gateway-round.js";

/** The parts of a server's surface a manifest sets a policy for. */
export type SurfacePart = "prompts" | "resources" | "completion" | "logging";

/** What the surface methods use of a governance runtime (`createGovernance` returns all of it). */
export interface SurfaceRuntime {
  /** The pool that forwards the requests (its `request`, `capabilities` and `onNotification`). */
  pool: ToolServerPool;
  /** Where each server's source manifest, and so its `surface` policy, is found. */
  catalog: SourceCatalog;
  /** Records each read as one row, as it records every call (`Broker.recordRead`). */
  broker: Pick<Broker, "recordRead">;
  /** Stamps the rows. @default the system clock */
  clock?: Clock | undefined;
  /**
   * The sources switched on or off per session: a source switched off for the caller's session is not
   * listed and its reads are refused, as its tools are. @default every source as its manifest says
   */
  sessions?: {
    isSourceEnabled(sessionId: string, source: { id: string; enabledByDefault: boolean }): boolean;
  };
}

/** Who asks: the governance session, its user, and how to put a read to that user. */
export interface SurfaceCaller {
  /** The governance session the rows belong to. */
  sessionId: string;
  /** The user the request is made for (`undefined`: the single user). */
  principal: string | undefined;
  /**
   * Puts one read to the caller's human; resolves `true` when approved. Absent: nobody can be asked,
   * so a read under `approval` is refused.
   */
  ask?: ((question: string, signal: AbortSignal | undefined) => Promise<boolean>) | undefined;
  /** Aborts the upstream request (the client cancelled, or left). */
  signal?: AbortSignal | undefined;
  /**
   * The id the read's row is keyed by (`toolCallId`): a 2026-07-28 retry's answer is used once.
   * @default none
   */
  callId?: string | undefined;
}

/** One upstream server that offers a part of its surface, and how. */
export interface SurfaceServer {
  serverId: string;
  /** The source id its rows carry (its manifest's, else the derived one). */
  sourceId: string;
  policy: SurfacePolicy;
  /** Its manifest's `enabledByDefault` (what a session that switched nothing gets); absent without one. */
  enabledByDefault?: boolean | undefined;
}

/** MCP's error code for a resource the server does not have. */
export const RESOURCE_NOT_FOUND = -32002;

/** Whether the runtime can forward a server's surface (a pool that does it, a broker to audit it). */
export function hasSurface<T extends object>(runtime: T): runtime is T & SurfaceRuntime {
  const parts = runtime as { [K in keyof SurfaceRuntime]?: Partial<SurfaceRuntime[K]> | undefined };
  return (
    parts.pool?.request !== undefined && parts.catalog !== undefined && parts.broker?.recordRead !== undefined
  );
}

/**
 * The policy and source id of one server's part: its manifest's `surface` entry, `allowed` when absent.
 * @param runtime the catalog
 * @param serverId a configured server id
 * @param part the surface part
 */
export function surfaceServerOf(
  runtime: Pick<SurfaceRuntime, "catalog">,
  serverId: string,
  part: SurfacePart,
): SurfaceServer {
  const source = runtime.catalog.sources().find((candidate) => candidate.serverId === serverId);
  return {
    serverId,
    sourceId: source?.id ?? derivedSourceId(serverId),
    policy: source?.manifest.surface?.[part] ?? "allowed",
    ...(source === undefined ? {} : { enabledByDefault: source.manifest.enabledByDefault }),
  };
}

/**
 * The servers whose `part` clients may use: configured, declaring the capability, and not `denied`.
 * @param runtime pool and catalog
 * @param part the surface part
 * @returns the servers in config order
 */
export async function surfaceServers(runtime: SurfaceRuntime, part: SurfacePart): Promise<SurfaceServer[]> {
  const capability = CAPABILITY[part];
  const servers = await Promise.all(
    runtime.pool.serverIds().map(async (serverId) => {
      const server = surfaceServerOf(runtime, serverId, part);
      if (server.policy === "denied") return undefined;
      if (runtime.pool.state(serverId).status === "disabled") return undefined;
      const capabilities = await runtime.pool.capabilities?.(serverId);
      return capabilities?.[capability] === undefined ? undefined : server;
    }),
  );
  return servers.filter((server) => server !== undefined);
}

const CAPABILITY = {
  prompts: "prompts",
  resources: "resources",
  completion: "completions",
  logging: "logging",
} as const;

/** One request to govern: which server, which method and which object (a prompt's name, a uri). */
export interface SurfaceRequest {
  server: SurfaceServer;
  method: SurfaceMethod;
  /** The prompt's name, the resource's uri, or the level: what the row names. */
  name: string;
  /** The params sent upstream. */
  params: Record<string, unknown>;
  /** Whether this is a list request (a row only under `audited` and `approval`). */
  isList?: boolean | undefined;
  /**
   * Whether to send it upstream; `false` governs and records a request the gateway answers itself
   * (a subscription it already holds upstream for another session). @default true
   */
  upstream?: boolean | undefined;
}

/**
 * Runs one request of the surface under its server's policy: `denied` is refused, `approval` asks the
 * caller's human first, and every read (each list too under `audited` and `approval`) is written as a
 * ledger row with its outcome, before the answer is returned. An upstream error is the client's
 * JSON-RPC error with the server's code and message.
 * @param runtime pool, catalog and the broker that records
 * @param caller session, principal, the question and the signal
 * @param request the server, method, object and params
 * @returns the server's result
 * @throws McpError `InvalidParams` when the policy or the human refused; the upstream's error otherwise
 */
export async function governedSurfaceRequest(
  runtime: SurfaceRuntime,
  caller: SurfaceCaller,
  request: SurfaceRequest,
): Promise<Record<string, unknown>> {
  const { server } = request;
  const recorded = !request.isList || server.policy === "audited" || server.policy === "approval";
  const keepsAnswer = server.policy === "audited" || server.policy === "approval";
  const clock = runtime.clock ?? systemClock;
  const startedMs = clock.now();
  const record = (outcome: { result: unknown } | { error: GovernanceError }, attempts: number) =>
    recorded
      ? recordSurfaceRow(runtime, caller, request, outcome, keepsAnswer, startedMs, attempts)
      : Promise.resolve();
  const { sourceId: id, enabledByDefault } = server;
  if (
    enabledByDefault !== undefined &&
    runtime.sessions &&
    !runtime.sessions.isSourceEnabled(caller.sessionId, { id, enabledByDefault })
  ) {
    // What the session switched off is neither offered nor read, as for its tools.
    if (request.isList || request.method === "logging/setLevel") return {};
    const refusal = new GovernanceError(
      "SOURCE_DISABLED",
      `Source '${id}' is not enabled for this session; its ${partOf(request.method)} are not offered.`,
    );
    await record({ error: refusal }, 0);
    throw toMcpError(refusal);
  }
  if (server.policy === "denied") {
    const refusal = new GovernanceError(
      "PERMISSION_DENIED",
      `The ${partOf(request.method)} of server '${server.serverId}' are not offered through this gateway (its manifest's surface policy is denied).`,
    );
    await record({ error: refusal }, 0);
    throw toMcpError(refusal);
  }
  if (server.policy === "approval" && !request.isList) {
    const question = `Allow ${request.method} '${request.name}' on server '${server.serverId}'?`;
    let approved = false;
    let why = "the client cannot be asked (it declared no elicitation, or its user may not approve)";
    if (caller.ask !== undefined) {
      try {
        approved = await caller.ask(question, caller.signal);
        why = "the user declined";
      } catch (error) {
        // Asked by a round trip: nothing is read or decided yet, so nothing is recorded.
        if (error instanceof SurfaceInputRequired) throw error;
        why = `the question failed (${error instanceof Error ? error.message : String(error)})`;
      }
    }
    if (!approved) {
      const refusal = new GovernanceError(
        "PERMISSION_DENIED",
        `${request.method} '${request.name}' on server '${server.serverId}' needs approval and was not approved: ${why}.`,
      );
      await record({ error: refusal }, 0);
      throw toMcpError(refusal);
    }
  }
  let result: Record<string, unknown>;
  try {
    const pool = runtime.pool as Required<Pick<ToolServerPool, "request">>;
    result =
      request.upstream === false
        ? {}
        : await pool.request(server.serverId, request.method, request.params, {
            ...(caller.signal === undefined ? {} : { signal: caller.signal }),
          });
  } catch (error) {
    const failure = governanceErrorOf(error);
    await record({ error: failure }, 1);
    throw toMcpError(failure, error);
  }
  await record({ result }, 1);
  return result;
}

/** Has the broker write one row: source, method as the tool, the object as the MCP name, the outcome. */
function recordSurfaceRow(
  runtime: SurfaceRuntime,
  caller: SurfaceCaller,
  request: SurfaceRequest,
  outcome: { result: unknown } | { error: GovernanceError },
  keepsAnswer: boolean,
  startedMs: number,
  attempts: number,
): Promise<void> {
  const { server, method, params } = request;
  return runtime.broker.recordRead({
    sourceId: server.sourceId,
    toolId: method,
    name: request.name,
    request: { serverId: server.serverId, method, params },
    sessionId: caller.sessionId,
    principal: caller.principal,
    // A gateway session is the thread its rows are keyed in.
    threadId: caller.sessionId,
    toolCallId: caller.callId,
    attempts,
    startedMs,
    finishedMs: (runtime.clock ?? systemClock).now(),
    outcome: "error" in outcome ? outcome : { result: outcome.result, keep: keepsAnswer },
  });
}

function partOf(method: SurfaceMethod): string {
  if (method.startsWith("prompts/")) return "prompts";
  if (method.startsWith("resources/")) return "resources";
  if (method === "completion/complete") return "completions";
  return "log level";
}

/** A JSON-RPC error of the server keeps its code; anything else is the governance error it is. */
function governanceErrorOf(error: unknown): GovernanceError {
  if (isGovernanceError(error)) return error as GovernanceError;
  const code = rpcCodeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  return new GovernanceError(code === undefined ? "UPSTREAM_UNAVAILABLE" : "TOOL_FAILED", message, {
    cause: error,
    ...(code === undefined ? {} : { data: { rpcCode: code } }),
  });
}

function rpcCodeOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" && Number.isInteger(code) ? code : undefined;
}

/**
 * The client's JSON-RPC error for a refused or failed request: the upstream server's own code and
 * message when it answered with an error, else one that says what the gateway refused.
 * @param failure the governance error
 * @param cause the upstream error, if any
 * @returns the error to throw from a handler
 */
export function toMcpError(failure: GovernanceError, cause?: unknown): McpError {
  const upstream = rpcCodeOf(cause);
  if (upstream !== undefined) {
    // The server's own words reach the client as its results do: prompt tags inert.
    const data = neutralizeDeep((cause as { data?: unknown }).data);
    return new McpError(
      upstream,
      neutralizePromptTags(failure.message.replace(/^MCP error -?\d+: /, "")),
      data,
    );
  }
  const code =
    failure.code === "PERMISSION_DENIED" ||
    failure.code === "UNKNOWN_ID" ||
    failure.code === "SOURCE_DISABLED"
      ? ErrorCode.InvalidParams
      : ErrorCode.InternalError;
  return new McpError(code, failure.message, { code: failure.code });
}
