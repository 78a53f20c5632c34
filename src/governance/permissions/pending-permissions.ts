/**
 * Approval cards shown to a human and not yet answered, keyed by `threadId:toolCallId`, and how a
 * card ends without an answer (timeout, cancellation): as a recorded denial of its call.
 */

import type { Clock } from "../../core/index.js";
import type { AuthorizationRequest } from "./authorization.js";
import type { AuthorizationRecorder } from "./authorization-recorder.js";
import { renderPermission } from "./permission-render.js";
import { permissionCallKey, permissionFingerprint } from "./permission-request.js";
import type { PermissionCard, PermissionDecision } from "./permission-types.js";
import { type RecordedDecisions, requireCallKey } from "./recorded-decisions.js";
import type { DecideResult, PendingEndSource } from "./session-state-store.js";

/**
 * An approval card shown and not yet answered (`open`), or one that ended without an answer.
 * In memory of the replica that showed the card: a new process starts with none (their graph tasks
 * ask again); the answer, once recorded, goes to the shared `SessionStateStore` like any decision.
 */
export interface PendingPermission {
  card: PermissionCard;
  sessionId: string;
  /** Whose call the card is about: only that principal may answer it. Absent: the single user's. */
  principal?: string;
  threadId?: string;
  /** When the card was first shown, by the service's clock (ms). */
  askedAt: number;
  state: "open" | "timed_out" | "cancelled";
}

interface PendingEntry extends PendingPermission {
  request: AuthorizationRequest;
}

/**
 * Cards remembered at most; past it the oldest is forgotten. A card answered on another replica stays
 * open here until then, since nothing tells this replica (a forgotten card that is still waiting
 * starts its wait again when its task next runs).
 */
const MAX_ENTRIES = 10_000;

/** Options of `PendingPermissions`: the permission service's own clock, recorder and decisions. */
export interface PendingPermissionsOptions {
  /** Dates `askedAt` and measures waits. */
  clock: Clock;
  /** Writes the authorization row of a card that ends without an answer. */
  recorder: AuthorizationRecorder;
  /** Where the denial of an ended card waits for its call. */
  decisions: RecordedDecisions;
}

/** The pending approval cards of one `PermissionService` (the service documents the public methods). */
export class PendingPermissions {
  readonly #clock: Clock;
  readonly #recorder: AuthorizationRecorder;
  readonly #decisions: RecordedDecisions;
  readonly #entries = new Map<string, PendingEntry>();

  /** @param options clock, recorder and recorded decisions */
  constructor(options: PendingPermissionsOptions) {
    this.#clock = options.clock;
    this.#recorder = options.recorder;
    this.#decisions = options.decisions;
  }

  /**
   * Notes that a call's card is shown; the first note starts its wait.
   * @param request the call (with its `toolCallId`)
   * @param card builds the call's card; only called when the card was not shown before
   * @returns the pending entry (the existing one when the card was shown before)
   * @throws GovernanceError `INVALID_INPUT` for a request without `toolCallId`
   */
  note(request: AuthorizationRequest, card: () => PermissionCard): PendingPermission {
    const key = requireCallKey(request);
    const known = this.#entries.get(key);
    if (known) return publicPending(known);
    const entry: PendingEntry = {
      card: card(),
      sessionId: request.sessionId,
      ...(request.principal === undefined ? {} : { principal: request.principal }),
      ...(request.threadId === undefined ? {} : { threadId: request.threadId }),
      askedAt: this.#clock.now(),
      state: "open",
      request,
    };
    this.#entries.set(key, entry);
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= MAX_ENTRIES) break;
      this.#entries.delete(oldest);
    }
    return publicPending(entry);
  }

  /**
   * @param request the call
   * @returns the call's entry, whatever its state, or `undefined`
   */
  get(request: AuthorizationRequest): PendingPermission | undefined {
    const key = permissionCallKey(request);
    const entry = key === undefined ? undefined : this.#entries.get(key);
    return entry && publicPending(entry);
  }

  /**
   * @param threadId only this thread's cards when given
   * @param principal only this principal's cards when given
   * @returns the open entries, oldest first
   */
  list(threadId?: string, principal?: string): PendingPermission[] {
    return [...this.#entries.values()]
      .filter((e) => e.state === "open" && (threadId === undefined || e.threadId === threadId))
      .filter((e) => principal === undefined || e.principal === principal)
      .map(publicPending);
  }

  /**
   * Forgets an open card that a human answered, so a timeout or cancel can no longer end it.
   * @param key the call key
   */
  answered(key: string): void {
    if (this.#entries.get(key)?.state === "open") this.#entries.delete(key);
  }

  /**
   * Ends an open card that waited at least `timeoutMs` as a `wait_timeout` denial (once per card).
   * @param request the call
   * @param timeoutMs the longest wait
   * @returns the recorded denial, or `undefined` when the card is not open or still within its time
   */
  async expire(request: AuthorizationRequest, timeoutMs: number): Promise<DecideResult | undefined> {
    const key = permissionCallKey(request);
    const entry = key === undefined ? undefined : this.#entries.get(key);
    if (entry?.state !== "open" || this.#clock.now() - entry.askedAt < timeoutMs) return undefined;
    const reason = `nobody answered the approval request within ${timeoutMs} ms`;
    return this.#end(key as string, entry, "wait_timeout", reason);
  }

  /**
   * Ends every open card of a thread (or only the card of one tool call) as a `cancelled` denial.
   * @param threadId the LangGraph thread (the session when calls carry no thread)
   * @param message why, shown to the model if the call's task runs again
   * @param toolCallId only this call's card
   * @param principal only this principal's cards
   * @returns the cancelled entries
   */
  async cancel(
    threadId: string,
    message?: string,
    toolCallId?: string,
    principal?: string,
  ): Promise<PendingPermission[]> {
    const cancelled: PendingPermission[] = [];
    for (const [key, entry] of this.#entries) {
      if (entry.state !== "open" || (entry.threadId ?? entry.sessionId) !== threadId) continue;
      if (toolCallId !== undefined && entry.request.toolCallId !== toolCallId) continue;
      if (principal !== undefined && entry.principal !== principal) continue;
      const reason = `the approval request was cancelled${message ? `: ${message}` : ""}`;
      // #end flips the state before its first await, so a second cancel finds nothing open.
      cancelled.push(publicPending(entry));
      await this.#end(key, entry, "cancelled", reason);
    }
    return cancelled.map((e) => ({ ...e, state: "cancelled" }));
  }

  async #end(
    key: string,
    entry: PendingEntry,
    source: PendingEndSource,
    reason: string,
  ): Promise<DecideResult> {
    entry.state = source === "wait_timeout" ? "timed_out" : "cancelled";
    const { request } = entry;
    const authorizationId = await this.#recorder.append(request, renderPermission(request), source);
    const result: DecideResult = { authorizationId, decisionSource: source };
    const decision: PermissionDecision = { decision: "deny" };
    await this.#decisions.set(key, { fingerprint: permissionFingerprint(request), decision, result, reason });
    return result;
  }
}

function publicPending(entry: PendingEntry): PendingPermission {
  const { request: _request, ...rest } = entry;
  return { ...rest };
}
