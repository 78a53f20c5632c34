/**
 * What an upstream server asks or tells during a `tools/call`, relayed to the gateway's own client
 * through that call's MCP request (so on Streamable HTTP it travels on the call's stream and is
 * cancelled with it): elicitation when the client declared the mode asked for (else a refusal that
 * says why), sampling when the client declared sampling, progress for the client's `progressToken`,
 * and log messages at or above the client's level. The broker records each question and answer
 * (ARCHITECTURE.md "Upstream requests"); this file only carries them.
 */
import type {
  ElicitResult as UpstreamElicitResult,
  CreateMessageResult as UpstreamSamplingResult,
} from "@modelcontextprotocol/client";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type ClientCapabilities,
  CreateMessageResultSchema,
  ElicitResultSchema,
  type LoggingLevel,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { GovernanceError } from "../core/index.js";
import type { PoolCallOptions, UpstreamRelay } from "../mcp/index.js";
import { isLogLevelShown } from "./gateway-completion.js";

/** The MCP request a relay answers through. */
type RelayRequest = Pick<
  RequestHandlerExtra<ServerRequest, ServerNotification>,
  "_meta" | "sendNotification" | "sendRequest" | "signal"
>;

/** The longest timer Node.js keeps: the question waits as long as the call does (its signal ends it). */
const MAX_TIMER_MS = 2_147_483_647;

/** One call's relay, and a way to wait until everything it sent is out. */
export interface CallRelay {
  upstream: UpstreamRelay;
  onProgress?: PoolCallOptions["onProgress"];
  /** Settles once every notification sent so far is out (or failed), so none trails the answer. */
  settled(): Promise<void>;
}

/**
 * The relay of one `tools/call`.
 * @param request the call's MCP request
 * @param capabilities what the client declared
 * @param logLevel the client's current log level (`undefined`: none set, all pass; `null`: none pass)
 * @param onError receives notifications that could not be sent
 * @returns the relay for `executeGovernedToolCall`'s `upstream` and `onProgress`
 */
export function upstreamRelay(
  request: RelayRequest,
  capabilities: ClientCapabilities | undefined,
  logLevel: () => LoggingLevel | null | undefined,
  onError: (error: unknown) => void,
): CallRelay {
  let sending = Promise.resolve();
  const notify = (notification: ServerNotification) => {
    sending = sending.then(() => request.sendNotification(notification)).catch(onError);
  };
  const upstream: UpstreamRelay = {
    async elicit(params, context) {
      const mode = params.mode ?? "form";
      if (!supportsElicitation(capabilities, mode)) {
        throw new GovernanceError(
          "PERMISSION_DENIED",
          `MCP server '${context.serverId}' asked the user a question (elicitation, ${mode} mode), but this gateway's client declared no ${mode} elicitation, so nobody could answer it; the call was stopped.`,
          { data: { serverId: context.serverId, reason: "elicitation_unsupported" } },
        );
      }
      const answer = await request.sendRequest(
        { method: "elicitation/create", params: params as never },
        ElicitResultSchema,
        askedIn(context.era, AbortSignal.any([request.signal, context.signal])),
      );
      return answer as UpstreamElicitResult;
    },
    onLog(params) {
      const level = logLevel();
      if (level === null || !isLogLevelShown(params.level, level)) return;
      notify({ method: "notifications/message", params: params as never });
    },
  };
  if (capabilities?.sampling !== undefined) {
    upstream.sample = async (params, context) => {
      const answer = await request.sendRequest(
        { method: "sampling/createMessage", params: params as never },
        CreateMessageResultSchema,
        askedIn(context.era, AbortSignal.any([request.signal, context.signal])),
      );
      return answer as UpstreamSamplingResult;
    };
  }
  const progressToken = request._meta?.progressToken;
  const relay: CallRelay = { upstream, settled: () => sending };
  if (progressToken !== undefined) {
    relay.onProgress = (progress) =>
      notify({ method: "notifications/progress", params: { progressToken, ...progress } });
  }
  return relay;
}

/**
 * The options of a relayed question's request: its signal, no timeout of its own, and the revision the
 * upstream server asked in (`upstreamEra`), which a held call's state names so that a retry refused
 * on another replica can say why the question cannot move.
 */
function askedIn(era: string, signal: AbortSignal) {
  return { signal, timeout: MAX_TIMER_MS, upstreamEra: era } as { signal: AbortSignal; timeout: number };
}

/**
 * The question of a read under an `approval` surface policy, put to the client's human by form
 * elicitation related to the request; `undefined` when the client declared no form elicitation.
 * @param request the MCP request being answered
 * @param capabilities what the client declared
 * @returns a function that resolves `true` when the human approved
 */
export function askSurfaceApproval(
  request: RelayRequest,
  capabilities: ClientCapabilities | undefined,
): ((question: string, signal: AbortSignal | undefined) => Promise<boolean>) | undefined {
  if (!supportsElicitation(capabilities, "form")) return undefined;
  return async (question, signal) => {
    const answer = await request.sendRequest(
      { method: "elicitation/create", params: surfaceApprovalForm(question) },
      ElicitResultSchema,
      { signal: signal ?? request.signal, timeout: MAX_TIMER_MS },
    );
    return isSurfaceApproved(answer);
  };
}

/**
 * The form that asks about a read under an `approval` surface policy (both faces ask the same).
 * @param question the question
 * @returns the `elicitation/create` params
 */
export function surfaceApprovalForm(question: string) {
  return {
    message: question,
    requestedSchema: {
      type: "object" as const,
      properties: {
        decision: { type: "string" as const, enum: ["allow", "deny"], enumNames: ["Allow", "Deny"] },
      },
      required: ["decision"],
    },
  };
}

/**
 * @param answer the client's answer to `surfaceApprovalForm`
 * @returns whether it allows the read
 */
export function isSurfaceApproved(answer: unknown): boolean {
  const parsed = ElicitResultSchema.safeParse(answer);
  return parsed.success && parsed.data.action === "accept" && parsed.data.content?.decision === "allow";
}

/**
 * Whether the client can answer an elicitation of a mode. Form mode is what a client supports when it
 * declares `elicitation` without naming a mode.
 * @param capabilities what the client declared
 * @param mode the elicitation's mode
 * @returns true when the client declared it
 */
export function supportsElicitation(capabilities: ClientCapabilities | undefined, mode: string): boolean {
  const elicitation = capabilities?.elicitation as { form?: unknown; url?: unknown } | undefined;
  if (elicitation === undefined) return false;
  if (mode === "url") return elicitation.url !== undefined;
  return elicitation.form !== undefined || elicitation.url === undefined;
}
