/**
 * Decisions recorded for calls before their broker invocation (a human's answer, or an approval card
 * that ended without one), keyed by `threadId:toolCallId`, each consumed by one `authorize`, on any
 * replica that shares the `SessionStateStore`. A consumed decision stays as the mark that its call
 * runs: a second resume of the same card (on another replica, at the same time) neither records a new
 * decision nor asks again, and its broker call waits for the first one's row (ARCHITECTURE.md "State:
 * who owns what").
 */

import { canonicalJson, GovernanceError } from "../../core/index.js";
import type { AuthorizationRequest, AuthorizeResult } from "./authorization.js";
import { permissionCallKey, permissionFingerprint } from "./permission-request.js";
import type { PermissionDecision } from "./permission-types.js";
import type {
  DecideResult,
  RecordedDecision,
  SessionStateStore,
  StoredDecision,
} from "./session-state-store.js";

/**
 * The decisions of one `PermissionService` that wait for their call, kept in its `SessionStateStore`
 * (in memory by default; shared by every replica with a shared store).
 */
export class RecordedDecisions {
  readonly #store: SessionStateStore;

  /** @param store where the decisions wait */
  constructor(store: SessionStateStore) {
    this.#store = store;
  }

  /**
   * Records (or replaces) the decision of a call, unless a decision of the same call was taken.
   * @param key the call key (`permissionCallKey`)
   * @param recorded the decision, bound to the call's fingerprint
   * @returns `recorded`, or the taken decision the call runs with (`taken: true`)
   */
  set(key: string, recorded: RecordedDecision): Promise<StoredDecision> {
    return this.#store.putDecision(key, recorded);
  }

  /**
   * The first result when the same decision is recorded again for a call still waiting, or any
   * decision for a call whose decision was already consumed (the call runs with that one).
   * @param key the call key
   * @param fingerprint the call's `permissionFingerprint`
   * @param decision the validated decision
   * @returns the earlier result, or `undefined` when the call differs, or the waiting decision does
   */
  async repeated(
    key: string,
    fingerprint: string,
    decision: PermissionDecision,
  ): Promise<DecideResult | undefined> {
    const stored = await this.#store.peekDecision(key);
    if (stored?.fingerprint !== fingerprint) return undefined;
    if (stored.taken || canonicalJson(stored.decision) === canonicalJson(decision)) return stored.result;
    return undefined;
  }

  /**
   * Consumes the decision recorded for a call's key: whatever the outcome, it cannot authorize
   * another call afterwards.
   * @param request the broker's description of the call
   * @param isDangerous whether the policy makes the call dangerous (asked only when needed)
   * @returns the broker's verdict when a decision for this very call (same fingerprint) was recorded
   * (`runningElsewhere` when another invocation consumed it first), else `undefined` (the policy decides)
   */
  async take(
    request: AuthorizationRequest,
    isDangerous: () => boolean,
  ): Promise<AuthorizeResult | undefined> {
    const key = permissionCallKey(request);
    if (key === undefined) return undefined;
    // A safe call asks the store only when this replica has heard of a decision for it: a shared
    // store costs no round trip per safe call (ARCHITECTURE.md "State: who owns what").
    if (!this.#store.mayHoldDecision(key) && !isDangerous()) return undefined;
    const recorded = await this.#store.takeDecision(key);
    if (recorded === undefined || recorded.fingerprint !== permissionFingerprint(request)) return undefined;
    if (!recorded.taken) return toBrokerDecision(recorded);
    return {
      allowed: false,
      runningElsewhere: true,
      reason: "its decision was consumed by another invocation of the same tool call, which runs it",
    };
  }
}

/**
 * The call key of a request that must have one (a decision or a pending card is bound to it).
 * @param request the call
 * @returns `permissionCallKey(request)`
 * @throws GovernanceError `INVALID_INPUT` for a request without `toolCallId`
 */
export function requireCallKey(request: AuthorizationRequest): string {
  const key = permissionCallKey(request);
  if (key === undefined) {
    throw new GovernanceError("INVALID_INPUT", "A permission decision needs the request's toolCallId.");
  }
  return key;
}

function toBrokerDecision(recorded: RecordedDecision): AuthorizeResult {
  const { authorizationId } = recorded.result;
  if (recorded.decision.decision !== "deny") return { allowed: true, authorizationId };
  if (recorded.reason !== undefined) return { allowed: false, authorizationId, reason: recorded.reason };
  const message = recorded.decision.message?.trim();
  return { allowed: false, authorizationId, reason: `denied by the user${message ? `: ${message}` : ""}` };
}
