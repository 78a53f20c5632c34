import { classifyFailure } from "../../contract/index.js";
import { GovernanceError, isGovernanceError, optional } from "../../core/index.js";
import type { InvocationRecord } from "../audit/index.js";
import { neutralizeDeep, neutralizePromptTags } from "../envelope/index.js";

/**
 * The error a failed invocation throws and records: any failure classified into a `GovernanceError`,
 * with the invocation id in its data and the attempts made so far.
 * @param caught what the invocation threw
 * @param row the invocation's id and the attempts counted on its row
 * @returns the error, its message and data neutralized
 */
export function toGovernanceError(
  caught: unknown,
  row: Pick<InvocationRecord, "invocationId" | "attempts">,
): GovernanceError {
  const base = isGovernanceError(caught)
    ? caught
    : (() => {
        const info = classifyFailure(caught);
        return new GovernanceError(info.code, info.message, {
          retryable: info.retryable,
          cause: caught,
          ...optional({ retryAfterMs: info.retryAfterMs }),
        });
      })();
  // Messages and data may quote a server (its error text, a forged id): external text is data, so
  // the model and the ledger get it with reserved tags and role tokens made inert, as in results.
  return new GovernanceError(base.code, neutralizePromptTags(base.message), {
    retryable: base.retryable,
    attempts: Math.max(base.attempts, row.attempts),
    data: { ...neutralizeDeep(base.data), invocationId: row.invocationId },
    cause: base.cause ?? caught,
    ...optional({ retryAfterMs: base.retryAfterMs }),
  });
}
