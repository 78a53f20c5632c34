/**
 * A call that already ran, answered from its row: the recorded outcome served again, the wait for a
 * row another invocation is writing, and the refusals of a replay key that names another call or
 * cannot be checked (see ARCHITECTURE.md, "The one call path", step 1).
 */
import { type McpToolResult, toGovernanceError } from "../../contract/index.js";
import { type Clock, GovernanceError, optional } from "../../core/index.js";
import type { ContentStore, InvocationRecord, LedgerReader } from "../audit/index.js";
import { neutralizeDeep, neutralizePromptTags } from "../envelope/index.js";
import type { InvokeOutcome, InvokeRequest } from "./broker-types.js";
import type { Row } from "./call-recorder.js";

/**
 * What `invoke` returns for a row.
 * @param row the call's row (or the row so far)
 * @param result the normalized result
 * @param replayed whether it came from the ledger
 */
export function outcomeOf(
  row: Pick<Row, "invocationId" | "cacheHit" | "attempts" | "queueWaitMs">,
  result: McpToolResult,
  replayed: boolean,
): InvokeOutcome {
  return {
    invocationId: row.invocationId,
    result,
    cacheHit: row.cacheHit,
    replayed,
    attempts: row.attempts,
    queueWaitMs: row.queueWaitMs,
  };
}

/**
 * The recorded outcome of a call that already ran.
 * @param prior its row
 * @param objects where its normalized result is stored
 * @returns the outcome, `replayed: true`
 * @throws GovernanceError the recorded error again (`data.replayed`), for a failed call
 */
export async function replayedOutcome(
  prior: InvocationRecord,
  objects: ContentStore,
): Promise<InvokeOutcome> {
  if (prior.status === "error" || prior.normalizedRef === undefined) {
    const e = prior.error;
    throw new GovernanceError(
      (e?.code ?? "UPSTREAM_UNAVAILABLE") as GovernanceError["code"],
      e?.message ?? "The recorded call failed.",
      {
        retryable: e?.retryable ?? false,
        attempts: e?.attempts ?? prior.attempts,
        data: { invocationId: prior.invocationId, replayed: true },
        ...optional({ retryAfterMs: e?.retryAfterMs }),
      },
    );
  }
  return outcomeOf(prior, await objects.getJson<McpToolResult>(prior.normalizedRef), true);
}

/**
 * Polls the ledger for the row of a call another invocation runs (another replica's, which consumed
 * the human's decision first), with growing pauses.
 * @param ledger the reads
 * @param clock times the pauses
 * @param request the call (with its `threadId` and `toolCallId`)
 * @param waitMs how long to wait
 * @returns the row
 * @throws GovernanceError `TIMEOUT` (retryable) when no row came within `waitMs`; the signal's reason
 *   when the caller aborted
 */
export async function waitForRow(
  ledger: LedgerReader,
  clock: Clock,
  request: InvokeRequest,
  waitMs: number,
): Promise<InvocationRecord> {
  const threadId = request.threadId as string;
  const toolCallId = request.toolCallId as string;
  const until = clock.now() + waitMs;
  for (let pause = 25; ; pause = Math.min(pause * 2, 500)) {
    const prior = await ledger.findByCall(threadId, toolCallId);
    if (prior !== undefined) return prior;
    const left = until - clock.now();
    if (left <= 0) {
      throw new GovernanceError(
        "TIMEOUT",
        `Tool call '${toolCallId}' of thread '${threadId}' was approved and runs in another invocation (another replica consumed its decision first), which recorded no outcome within ${waitMs} ms; nothing was run here. Try again to replay its outcome once it is recorded.`,
        { retryable: true, data: { threadId, toolCallId, runningElsewhere: true } },
      );
    }
    await clock.sleep(Math.min(pause, left), request.signal);
  }
}

/**
 * The refusal of a call whose `threadId:toolCallId` already names another call (another session,
 * source, tool or arguments), so that one session cannot read or join another's call by its key. The
 * message names the clashing key; the first call's invocation id is not disclosed.
 * The built-in tools refuse a reused key with this same error (`artifacts/download-ledger.ts`).
 * @param request the refused call (its key)
 * @param invocationId the refusal's own row
 */
export function reusedKeyError(
  request: { threadId?: string | undefined; toolCallId?: string | undefined },
  invocationId: string,
): GovernanceError {
  return new GovernanceError(
    "PERMISSION_DENIED",
    neutralizePromptTags(
      `Tool call id '${request.toolCallId}' of thread '${request.threadId}' was already used for a different call (another session, source, tool or arguments); a replay must repeat the same call. Use a new tool call id.`,
    ),
    {
      data: neutralizeDeep({
        reason: "tool_call_id_reused",
        threadId: request.threadId,
        toolCallId: request.toolCallId,
        invocationId,
      }),
    },
  );
}

/**
 * The refusal of a call whose replay key could not be looked up (the ledger did not answer): nothing
 * ran, and the key stays free for the call once the ledger answers.
 * @param request the refused call
 * @param caught what the lookup threw
 * @param invocationId the refusal's own row
 */
export function uncheckedKeyError(
  request: InvokeRequest,
  caught: unknown,
  invocationId: string,
): GovernanceError {
  const base = toGovernanceError(caught);
  return new GovernanceError(
    base.code,
    neutralizePromptTags(
      `${base.message} Tool call '${request.toolCallId}' was not run: whether it already ran could not be checked.`,
    ),
    { retryable: base.retryable, data: { invocationId }, cause: caught },
  );
}
