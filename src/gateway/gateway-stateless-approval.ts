/**
 * The gateway's approval path for 2026-07-28 clients, as a multi-round-trip request: a dangerous call
 * that no grant or mode covers is answered `input_required` with the approval card as an embedded
 * form elicitation and a signed `requestState`; the client's retry with the answer records the
 * decision under the tool call id the state reserved and runs the call once, on whichever replica it
 * reaches (see ARCHITECTURE.md, "The governed MCP gateway").
 */
import { randomUUID } from "node:crypto";
import type { CallToolResult, ClientCapabilities, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { ProtocolError } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { LedgerReader } from "../governance/audit/index.js";
import type { AuthorizationRequest, PermissionCard } from "../governance/permissions/index.js";
import { approvalForm, type OutOfBandApproval } from "./gateway-approval-text.js";
import {
  approvalQuestion,
  type ElicitationApprovalRuntime,
  recordElicitedAnswer,
  refuseWithoutQuestion,
  supportsFormElicitation,
} from "./gateway-elicitation.js";
import { type ApprovalStateCodec, argumentsHash } from "./gateway-request-state.js";
import type { GatewayRequestExtra, GatewaySession } from "./gateway-session.js";

/** The key of the approval question in `inputRequests` and `inputResponses`. */
export const APPROVAL_INPUT_KEY = "approval";

/** JSON-RPC invalid params: the code of a refused `requestState`. */
const INVALID_PARAMS = -32602;

/** A round trip's answer to the client: the call's result, or the question to answer first. */
export type StatelessCallResult =
  | CallToolResult
  | {
      resultType: "input_required";
      inputRequests: Record<string, { method: "elicitation/create"; params: Record<string, unknown> }>;
      requestState: string;
    };

/** What a stateless approval needs. */
export interface StatelessApprovalSettings {
  governance: ElicitationApprovalRuntime & { ledger: LedgerReader };
  codec: ApprovalStateCodec;
  outOfBand?: OutOfBandApproval | undefined;
  /**
   * The permission request of a built-in call (`builtinAuthorizationRequest`), so that a dangerous
   * download or extraction is asked about by the same round trip. @default none: built-ins run unasked
   */
  builtinRequest?:
    | ((
        name: string,
        args: Record<string, unknown>,
        call: { sessionId: string; principal?: string | undefined; threadId: string; toolCallId: string },
      ) => Promise<AuthorizationRequest | undefined>)
    | undefined;
}

/** One retried or first `tools/call` of a 2026-07-28 client. */
export interface StatelessCall {
  name: string;
  args: Record<string, unknown>;
  capabilities: ClientCapabilities | undefined;
  inputResponses: Record<string, unknown> | undefined;
  requestState: unknown;
  /**
   * The call continues its upstream server's 2026-07-28 rounds by retries (`GatewaySession.callTool`'s
   * `rounds`): the first round trip has no answers yet. @default none: every question is held
   */
  rounds?: { answers: readonly ElicitResult[] } | undefined;
}

const elicitResultSchema = z.discriminatedUnion("action", [
  z.object({ action: z.literal("accept"), content: z.record(z.string(), z.unknown()).optional() }),
  z.object({ action: z.literal("decline") }),
  z.object({ action: z.literal("cancel") }),
]);

/**
 * Runs one `tools/call` of a 2026-07-28 client with the approval as a multi-round-trip request. A
 * retry's state must verify (signature, expiry, this principal, this very call) and must not have
 * run already; a refused one is a JSON-RPC error and nothing is recorded or run.
 * @param session the conversation's session
 * @param call the call, the client's capabilities and its round-trip fields
 * @param request the MCP request (signal, related notifications)
 * @param settings the runtime, the state codec, the out-of-band commands
 * @returns the result, or `input_required` with the card and the state to echo
 * @throws ProtocolError -32602 for a forged, expired, replayed, other principal's or other call's state
 */
export async function callWithStatelessApproval(
  session: GatewaySession,
  call: StatelessCall,
  request: GatewayRequestExtra,
  settings: StatelessApprovalSettings,
): Promise<StatelessCallResult> {
  const governed = session.governedTool(call.name);
  const builtin =
    governed === undefined && session.hasBuiltin(call.name) ? settings.builtinRequest : undefined;
  // tool_search, a built-in nobody asks about, or a call the executor refuses (and records) on its own.
  if ((governed === undefined && builtin === undefined) || !session.mayApprove) {
    if (call.requestState !== undefined)
      refuseRequestState("the call no longer needs an approval round trip");
    return session.callTool(call.name, call.args, request, { ask: false, rounds: call.rounds });
  }
  const approval = {
    name: governed?.name ?? call.name,
    args: call.args,
    sessionId: session.sessionId,
    principal: session.principal,
    threadId: session.threadId,
  };
  // A built-in's question is about its own permission request (a download's plan, an extraction's job).
  const questionOf = async (toolCallId: string) => {
    if (governed)
      return approvalQuestion(settings.governance, { ...approval, tool: governed.tool, toolCallId });
    const built = await builtin?.(call.name, call.args, { ...approval, toolCallId });
    return built && builtinQuestion(settings.governance.permissions, built);
  };
  if (call.requestState === undefined) {
    const toolCallId = randomUUID();
    const question = await questionOf(toolCallId);
    if (question === undefined)
      return session.callTool(call.name, call.args, request, { toolCallId, ask: false, rounds: call.rounds });
    if (!supportsFormElicitation(call.capabilities)) {
      // Without a form to answer, the built-in's own permission step refuses it (and records it).
      if (!governed)
        return session.callTool(call.name, call.args, request, {
          toolCallId,
          ask: false,
          rounds: call.rounds,
        });
      const denial = refuseWithoutQuestion(
        question.card,
        { ...approval, tool: governed.tool, toolCallId },
        settings.outOfBand,
      );
      // The executor records the refusal (one row) and shapes the error, as for a 2025 client.
      return session.callTool(call.name, call.args, request, {
        toolCallId,
        rounds: call.rounds,
        approval: () => denial,
      });
    }
    return ask(settings, question.card, approval, toolCallId, undefined);
  }

  const verified = settings.codec.verify(call.requestState, {
    tool: approval.name,
    args: call.args,
    principal: session.principal,
    sessionId: session.sessionId,
  });
  if (!verified.ok) refuseRequestState(verified.reason);
  const { toolCallId } = verified.state;
  // Replayed: the call of this state ran (or was refused) already; it never runs twice.
  if (await settings.governance.ledger.findByCall(session.threadId, toolCallId))
    refuseRequestState("replayed");
  const question = await questionOf(toolCallId);
  // Covered meanwhile (a grant, the mode): the broker decides alone.
  if (question === undefined)
    return session.callTool(call.name, call.args, request, { toolCallId, ask: false, rounds: call.rounds });
  const answer = elicitResultSchema.safeParse(call.inputResponses?.[APPROVAL_INPUT_KEY]);
  if (!answer.success) {
    return ask(settings, question.card, approval, toolCallId, "The approval answer is missing or malformed.");
  }
  const recorded = await recordElicitedAnswer(
    settings.governance.permissions,
    question.request,
    question.card,
    answer.data as ElicitResult,
  );
  if (!recorded.recorded) return ask(settings, question.card, approval, toolCallId, recorded.error);
  // The broker consumes the recorded decision of this tool call id: allowed, the call runs once.
  return session.callTool(call.name, call.args, request, { toolCallId, ask: false, rounds: call.rounds });
}

/** The question about a built-in's request: `undefined` when it is safe or covered. */
async function builtinQuestion(
  permissions: StatelessApprovalSettings["governance"]["permissions"],
  request: AuthorizationRequest,
): Promise<{ request: AuthorizationRequest; card: PermissionCard } | undefined> {
  if (!permissions.isDangerous(request)) return undefined;
  const verdict = await permissions.evaluate(request);
  return verdict.outcome === "allow" ? undefined : { request, card: verdict.card };
}

function ask(
  settings: StatelessApprovalSettings,
  card: Parameters<typeof approvalForm>[0],
  call: { name: string; args: Record<string, unknown>; sessionId: string; principal: string | undefined },
  toolCallId: string,
  invalid: string | undefined,
): StatelessCallResult {
  const form = approvalForm(card, call.name, invalid);
  return {
    resultType: "input_required",
    inputRequests: {
      [APPROVAL_INPUT_KEY]: { method: "elicitation/create", params: { mode: "form", ...form } },
    },
    requestState: settings.codec.mint({
      toolCallId,
      tool: call.name,
      argsHash: argumentsHash(call.args),
      principal: call.principal ?? "",
      sessionId: call.sessionId,
    }),
  };
}

/**
 * Refuses a retry whose `requestState` cannot continue anything: nothing is recorded or run.
 * @param reason why (a `RequestStateRefusal`, `replayed`, or a sentence)
 * @throws ProtocolError -32602 always
 */
export function refuseRequestState(reason: string): never {
  throw new ProtocolError(INVALID_PARAMS, `Invalid or expired requestState (${reason}); nothing was run.`, {
    reason: "invalid_request_state",
    detail: reason,
  });
}
