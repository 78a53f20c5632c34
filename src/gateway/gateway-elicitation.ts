/**
 * The gateway's approval path: a dangerous call that no grant or approval mode covers is put to the
 * client's human through MCP elicitation (`elicitation/create`, sent related to the tool call), and the
 * answer is recorded with the permission service exactly as a card answered in a graph. A client
 * without elicitation gets a `PERMISSION_DENIED` that says how to approve out of band (see
 * ARCHITECTURE.md, "The governed MCP gateway").
 */
import {
  type ClientCapabilities,
  type ElicitResult,
  ElicitResultSchema,
  ErrorCode,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { BuiltinCallApproval } from "../artifacts/index.js";
import {
  SPAN_ATTRIBUTES as A,
  type Clock,
  recordingActiveSpan,
  requireGovernanceOption,
  SPAN_NAMES,
  startTimer,
  systemClock,
} from "../core/index.js";
import type { SourceCatalog } from "../governance/catalog/index.js";
import {
  type AuthorizationRequest,
  createAuthorizationRequest,
  type PermissionCard,
  type PermissionDecision,
  type PermissionService,
} from "../governance/permissions/index.js";
import type { ApprovalHookResult, ApprovalRequest } from "../nodes/index.js";
import {
  approvalForm,
  type OutOfBandApproval,
  outOfBandCommands,
  outOfBandRefusal,
  parseApprovalForm,
} from "./gateway-approval-text.js";
import { currentGatewayCall, type GatewayApprovalHook, type GatewayCallContext } from "./gateway-session.js";

/** What the elicitation approval needs of a runtime (`createGovernance` returns it). */
export interface ElicitationApprovalRuntime {
  catalog: SourceCatalog;
  permissions: PermissionService;
}

/** Options of {@link createElicitationApproval}. */
export interface ElicitationApprovalOptions {
  /** The catalog and the permission service (`createGovernance`). */
  governance: ElicitationApprovalRuntime;
  /**
   * The commands that approve a call of a client without elicitation: the client is told their short
   * form, the operator (`report`) the complete one. @default none: the refusal says that the app
   *   embedding the gateway approves (`governance.permissions.grant` or `setApprovalMode`)
   */
  outOfBand?: OutOfBandApproval | undefined;
  /**
   * How long one elicitation waits for the human; past it the call is denied (`wait_timeout`, audited),
   * so a question nobody answers never holds its session (and its slot) open.
   * @default 10 minutes
   */
  waitTimeoutMs?: number | undefined;
  /** Answers asked for at most, malformed ones included; then the call is denied (`cancelled`). @default 3 */
  maxAttempts?: number | undefined;
  /** The wait's clock. @default the system clock */
  clock?: Clock | undefined;
}

/** How long a question waits for its human unless told otherwise. */
export const DEFAULT_APPROVAL_WAIT_MS = 10 * 60_000;

/** The longest timer Node.js keeps (a longer one fires at once). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Creates the gateway's default approval hook. A call the policy finds safe, or that a grant or the
 * session's `always_allow` mode covers, passes without a question. Otherwise, when the client declared
 * form elicitation, one `elicitation/create` related to the tool call shows the card's text and a
 * form of the card's decisions (`allow_once`, `allow_matching`, `allow_always`, `deny` with an
 * optional message); `accept` is recorded with `permissions.decide` (authorization row, grant,
 * approval mode), `decline` and `cancel` as a denial, and a malformed answer asks again up to
 * `maxAttempts` times. The broker's permission hook then consumes the recorded decision. A client
 * cancellation or disconnect during the question records the card as `cancelled`. A client without
 * elicitation gets a `PERMISSION_DENIED` whose message and `data.approve` say how to approve out of band.
 * @param options `governance` (the catalog and the permission service (`createGovernance`)), out-of-band commands, wait timeout, attempts
 * @returns the hook for `createGatewayServer({approval})` (its default when the runtime enforces permissions)
 * @example
 * const gateway = createGatewayServer({
 *   governance,
 *   approval: createElicitationApproval({ governance, waitTimeoutMs: 300_000 }),
 * });
 */
export function createElicitationApproval(options: ElicitationApprovalOptions): GatewayApprovalHook {
  requireGovernanceOption(options, "createElicitationApproval");
  const { governance } = options;
  const { permissions } = governance;
  const hook: GatewayApprovalHook = async (call, context) => {
    const question = await approvalQuestion(governance, call);
    if (question === undefined) return undefined;
    if (!supportsFormElicitation(context.session.server.getClientCapabilities())) {
      return refuseWithoutQuestion(question.card, call, options.outOfBand);
    }
    return elicit(permissions, question.request, question.card, call.name, context, options);
  };
  elicitationHooks.set(hook, options);
  return hook;
}

/** The hooks `createElicitationApproval` made, with their options (2026-07-28 asks the same way). */
const elicitationHooks = new WeakMap<GatewayApprovalHook, ElicitationApprovalOptions>();

/**
 * @param hook an approval hook
 * @returns its options when `createElicitationApproval` made it (a 2026-07-28 client is then asked by a
 *   multi-round-trip request, with the same out-of-band commands), else `undefined`
 */
export function elicitationApprovalOptionsOf(
  hook: GatewayApprovalHook,
): ElicitationApprovalOptions | undefined {
  return elicitationHooks.get(hook);
}

/**
 * The card a call needs a human's answer to, on both protocol revisions: `undefined` when the policy
 * finds the call safe, a grant or the approval mode covers it, or its input or tool is not valid (the
 * broker then reports and records the precise error).
 * @param governance the catalog and the permission service
 * @param call the call, with the tool call id its decision will be recorded under
 * @returns the authorization request and its card, or `undefined`
 */
export async function approvalQuestion(
  governance: ElicitationApprovalRuntime,
  call: ApprovalRequest,
): Promise<{ request: AuthorizationRequest; card: PermissionCard } | undefined> {
  const { catalog, permissions } = governance;
  const request = authorizationRequestOf(catalog, call);
  if (request === undefined || !permissions.isDangerous(request)) return undefined;
  const verdict = await permissions.evaluate(request);
  if (verdict.outcome === "allow") return undefined;
  return { request, card: verdict.card };
}

/**
 * The denial of a call whose client cannot be asked (no form elicitation): the short out-of-band
 * commands for the client, the complete ones for the operator.
 * @param card the call's card
 * @param call the call
 * @param outOfBand the commands' settings
 * @returns the hook's denial
 */
export function refuseWithoutQuestion(
  card: PermissionCard,
  call: ApprovalRequest,
  outOfBand: OutOfBandApproval | undefined,
): ApprovalHookResult {
  if (outOfBand) reportOutOfBand(card, call.name, call.sessionId, outOfBand);
  return outOfBandRefusal(card, call.name, call.sessionId, outOfBand);
}

/**
 * Records a human's answer to a card, as an elicitation result: `accept` with a valid form is the
 * form's decision, `decline` and `cancel` deny.
 * @param permissions the permission service
 * @param request the call the card was about
 * @param card the card
 * @param result the answer
 * @returns `recorded`, or why the answer is refused (then ask again)
 */
export async function recordElicitedAnswer(
  permissions: PermissionService,
  request: AuthorizationRequest,
  card: PermissionCard,
  result: ElicitResult,
): Promise<{ recorded: true } | { recorded: false; error: string }> {
  const answer = answerOf(result, card);
  if (!answer.success) return { recorded: false, error: answer.error };
  await permissions.decide(request, answer.decision);
  approvalEvent(permissions, request, "answered", answer.decision.decision, undefined);
  return { recorded: true };
}

/**
 * Creates the gateway's approval of a built-in call the broker runs in process (`artifact_download`,
 * `paper_extract_pdf`):
 * the same question as for an MCP call, about the broker's own permission request, asked through the
 * MCP request the built-in runs in. A call the policy finds safe, or that a grant or the session's mode
 * covers, passes; without a client that declared elicitation (or outside a gateway call) nothing is
 * asked, and the broker's permission step refuses it. The broker then consumes the recorded decision.
 * @param governance the permission service (`createGovernance`)
 * @param options wait timeout and attempts (out-of-band commands do not apply to built-ins)
 * @returns the hook for `createArtifactBuiltins({downloadApproval, extractionApproval})`
 */
export function createElicitationBuiltinApproval(
  governance: Pick<ElicitationApprovalRuntime, "permissions">,
  options: Omit<ElicitationApprovalOptions, "outOfBand" | "governance"> = {},
): BuiltinCallApproval {
  const { permissions } = governance;
  return async (_sessionId, build, name) => {
    const context = currentGatewayCall();
    if (
      !context?.session.mayApprove ||
      !supportsFormElicitation(context.session.server.getClientCapabilities())
    )
      return undefined;
    const request = await build();
    if (request === undefined || !permissions.isDangerous(request)) return undefined;
    const verdict = await permissions.evaluate(request);
    if (verdict.outcome === "allow") return undefined;
    await elicit(permissions, request, verdict.card, name, context, options);
    return undefined;
  };
}

/** Tells the operator the complete commands of a refused call (the client gets the short ones). */
function reportOutOfBand(
  card: PermissionCard,
  name: string,
  sessionId: string,
  outOfBand: OutOfBandApproval,
): void {
  const { grant, mode } = outOfBandCommands(card, name, sessionId, outOfBand, true);
  const line = `a call of ${name} in session ${sessionId} needs approval: run ${grant}${mode ? ` (or ${mode})` : ""}`;
  (outOfBand.report ?? ((text: string) => process.stderr.write(`sciencegate gateway: ${text}\n`)))(line);
}

/** Asks until a valid answer, the bound, a timeout or a cancellation; records the outcome. */
async function elicit(
  permissions: PermissionService,
  request: AuthorizationRequest,
  card: PermissionCard,
  name: string,
  { request: mcp }: GatewayCallContext,
  options: Omit<ElicitationApprovalOptions, "governance">,
): Promise<ApprovalHookResult | undefined> {
  const pending = permissions.notePending(request);
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  const waitMs = Math.min(options.waitTimeoutMs ?? DEFAULT_APPROVAL_WAIT_MS, MAX_TIMER_MS);
  let invalid: string | undefined;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    let result: ElicitResult;
    // The wait runs on the clock (a test advances it); the SDK's own request timeout is set past it.
    const waited = new AbortController();
    const cancelWait = startTimer(options.clock ?? systemClock, waitMs, () => waited.abort());
    try {
      result = await mcp.sendRequest(
        { method: "elicitation/create", params: approvalForm(card, name, invalid) },
        ElicitResultSchema,
        { signal: AbortSignal.any([mcp.signal, waited.signal]), timeout: MAX_TIMER_MS },
      );
    } catch (error) {
      if (mcp.signal.aborted) {
        return cancel(
          permissions,
          request,
          "the tool call was cancelled, or its client left, while the user was asked",
        );
      }
      if (waited.signal.aborted || (error instanceof McpError && error.code === ErrorCode.RequestTimeout)) {
        return expire(permissions, request, waitMs);
      }
      invalid = `The client failed the approval request (${errorText(error)}).`;
      continue;
    } finally {
      cancelWait();
    }
    // Cancelled or timed out meanwhile (by the app): that outcome stands, and the broker consumes it.
    const state = permissions.pendingFor(request)?.state;
    if (state === "cancelled" || state === "timed_out") return undefined;
    const answer = answerOf(result, card);
    if (answer.success) return record(permissions, request, answer.decision, pending.askedAt);
    invalid = answer.error;
  }
  return cancel(
    permissions,
    request,
    `no valid answer in ${maxAttempts} ${maxAttempts === 1 ? "try" : "tries"} (${invalid ?? "none"})`,
  );
}

type Answer = { success: true; decision: PermissionDecision } | { success: false; error: string };

/** `accept` with a valid form is the form's decision; `decline` and `cancel` deny. */
function answerOf(result: ElicitResult, card: PermissionCard): Answer {
  if (result.action === "decline") return { success: true, decision: { decision: "deny" } };
  if (result.action === "cancel") {
    return {
      success: true,
      decision: { decision: "deny", message: "the user dismissed the approval request without answering" },
    };
  }
  return parseApprovalForm(result.content, card);
}

async function record(
  permissions: PermissionService,
  request: AuthorizationRequest,
  decision: PermissionDecision,
  askedAt: number,
): Promise<undefined> {
  await permissions.decide(request, decision);
  approvalEvent(permissions, request, "answered", decision.decision, askedAt);
  return undefined;
}

async function cancel(
  permissions: PermissionService,
  request: AuthorizationRequest,
  why: string,
): Promise<undefined> {
  const askedAt = permissions.pendingFor(request)?.askedAt;
  await permissions.cancelPending(request.threadId ?? request.sessionId, why, {
    toolCallId: request.toolCallId,
  });
  approvalEvent(permissions, request, "cancelled", undefined, askedAt);
  return undefined;
}

async function expire(
  permissions: PermissionService,
  request: AuthorizationRequest,
  timeoutMs: number,
): Promise<undefined> {
  const askedAt = permissions.pendingFor(request)?.askedAt;
  // The SDK's timer and the permission service's clock may disagree by a tick: the card ends either way.
  const expired = await permissions.expirePending(request, timeoutMs);
  if (expired === undefined) {
    return cancel(permissions, request, `nobody answered the approval request within ${timeoutMs} ms`);
  }
  approvalEvent(permissions, request, "timed_out", undefined, askedAt);
  return undefined;
}

/** The approval event on the executor's span (the wait happens inside it here). */
function approvalEvent(
  permissions: PermissionService,
  request: AuthorizationRequest,
  outcome: string,
  decision: string | undefined,
  askedAt: number | undefined,
): void {
  const span = recordingActiveSpan();
  if (!span) return;
  span.addEvent(SPAN_NAMES.approval, {
    [A.approvalOutcome]: outcome,
    [A.approvalCardId]: permissions.cardFor(request).requestId,
    ...(decision === undefined ? {} : { [A.approvalDecision]: decision }),
    ...(askedAt === undefined ? {} : { [A.approvalAskedAt]: new Date(askedAt).toISOString() }),
  });
}

/**
 * Form mode is what a client supports when it declares `elicitation` without naming a mode.
 * @param capabilities the client's capabilities (its `initialize`, or a 2026-07-28 request's envelope)
 * @returns whether the client can be asked an approval form
 */
export function supportsFormElicitation(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation = capabilities?.elicitation;
  if (elicitation === undefined) return false;
  return elicitation.form !== undefined || elicitation.url === undefined;
}

function authorizationRequestOf(
  catalog: SourceCatalog,
  call: ApprovalRequest,
): AuthorizationRequest | undefined {
  try {
    return createAuthorizationRequest(catalog, {
      sourceId: call.tool.sourceId,
      toolId: call.tool.toolId,
      input: call.args,
      sessionId: call.sessionId,
      principal: call.principal,
      toolCallId: call.toolCallId,
      threadId: call.threadId,
    });
  } catch {
    return undefined;
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
