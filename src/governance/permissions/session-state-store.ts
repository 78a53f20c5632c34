/**
 * The session state port: per-session source switches and approval modes, and the human decisions
 * recorded for calls that have not run yet. Implementations must pass
 * `describeSessionStateStoreConformance` (in `sciencegate/testing`). See ARCHITECTURE.md "State: who
 * owns what".
 */
import { GovernanceError } from "../../core/index.js";
import type { Grant } from "./grant-store.js";
import type { ApprovalMode, PermissionDecision } from "./permission-types.js";

/** How an approval card ended without a human answer: it waited too long, or the app cancelled it. */
export type PendingEndSource = "wait_timeout" | "cancelled";

/** What `PermissionService.decide` (or an ended card) recorded. */
export interface DecideResult {
  /** The authorization row written for this decision (the call's broker row will reference it). */
  authorizationId: string;
  decisionSource: "user_once" | "user_grant" | "user_always" | "user_deny" | PendingEndSource;
  /** The session grant an `allow_matching` decision created or reused. */
  grant?: Grant;
}

/** A decision waiting for its call, keyed by thread and tool call id; consumed by one `authorize`. */
export interface RecordedDecision {
  /** `permissionFingerprint` of the call decided on: the decision authorizes that very call only. */
  fingerprint: string;
  decision: PermissionDecision;
  result: DecideResult;
  /** Why the call is refused when nobody decided (timeout, cancellation). */
  reason?: string;
}

/**
 * Where session settings and recorded decisions live. Settings are read synchronously (the broker
 * checks a source switch on every call) from a local view that a shared store keeps current; writes
 * resolve once durable, and the writer reads its own writes at once. Decisions are read from the store
 * itself: `takeDecision` hands a decision to one caller only, across every replica. After `close()` the
 * asynchronous methods reject with `UPSTREAM_UNAVAILABLE`; the synchronous reads keep answering from
 * the last view (a closing runtime may still list tools).
 */
export interface SessionStateStore {
  /**
   * The session's switch for a source, from the local view.
   * @returns `true` / `false` when set, `undefined` when never set (the manifest default applies)
   */
  sourceSwitch(sessionId: string, sourceId: string): boolean | undefined;
  /** Sets a session's switch for a source. */
  setSourceSwitch(sessionId: string, sourceId: string, enabled: boolean): Promise<void>;
  /**
   * The session's approval mode, from the local view.
   * @returns the mode set, or `undefined` (the policy's default applies)
   */
  approvalMode(sessionId: string): ApprovalMode | undefined;
  /** Sets a session's approval mode. */
  setApprovalMode(sessionId: string, mode: ApprovalMode): Promise<void>;
  /** Records (or replaces) the decision waiting for a call (`permissionCallKey`). */
  putDecision(key: string, recorded: RecordedDecision): Promise<void>;
  /** The decision waiting for a call, without consuming it. */
  peekDecision(key: string): Promise<RecordedDecision | undefined>;
  /** Removes and returns the decision waiting for a call: of concurrent callers, one gets it. */
  takeDecision(key: string): Promise<RecordedDecision | undefined>;
  /**
   * Whether a decision may wait for a call, from the local view, without I/O: `false` only when this
   * replica has not heard of one (a shared store may learn of a new one after its notification delay).
   */
  mayHoldDecision(key: string): boolean;
  /** Brings the local view up to date with the shared state now (nothing to do in memory). */
  sync(): Promise<void>;
  /** Releases the store. Idempotent. */
  close(): Promise<void>;
}

/**
 * The error every session state store method throws once the store is closed.
 * @returns an `UPSTREAM_UNAVAILABLE` error
 */
export function closedSessionStateError(): GovernanceError {
  return new GovernanceError("UPSTREAM_UNAVAILABLE", "The session state store is closed.");
}

/**
 * A `SessionStateStore` in this process's memory: the default, for one process. Everything vanishes
 * with the process; another replica sees none of it (use `PostgresSessionStateStore` for that).
 * Decisions are copied in and out.
 * @example
 * const state = new MemorySessionStateStore();
 * const permissions = new PermissionService({ ledger, state });
 * const sessions = new SessionSettings({ state });
 */
export class MemorySessionStateStore implements SessionStateStore {
  readonly #switches = new Map<string, Map<string, boolean>>();
  readonly #modes = new Map<string, ApprovalMode>();
  readonly #decisions = new Map<string, RecordedDecision>();
  #closed = false;

  sourceSwitch(sessionId: string, sourceId: string): boolean | undefined {
    return this.#switches.get(sessionId)?.get(sourceId);
  }

  async setSourceSwitch(sessionId: string, sourceId: string, enabled: boolean): Promise<void> {
    this.#ensureOpen();
    let map = this.#switches.get(sessionId);
    if (!map) {
      map = new Map();
      this.#switches.set(sessionId, map);
    }
    map.set(sourceId, enabled);
  }

  approvalMode(sessionId: string): ApprovalMode | undefined {
    return this.#modes.get(sessionId);
  }

  async setApprovalMode(sessionId: string, mode: ApprovalMode): Promise<void> {
    this.#ensureOpen();
    this.#modes.set(sessionId, mode);
  }

  async putDecision(key: string, recorded: RecordedDecision): Promise<void> {
    this.#ensureOpen();
    this.#decisions.set(key, structuredClone(recorded));
  }

  async peekDecision(key: string): Promise<RecordedDecision | undefined> {
    this.#ensureOpen();
    const recorded = this.#decisions.get(key);
    return recorded && structuredClone(recorded);
  }

  async takeDecision(key: string): Promise<RecordedDecision | undefined> {
    this.#ensureOpen();
    const recorded = this.#decisions.get(key);
    this.#decisions.delete(key);
    return recorded;
  }

  mayHoldDecision(key: string): boolean {
    return this.#decisions.has(key);
  }

  async sync(): Promise<void> {
    this.#ensureOpen();
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #ensureOpen(): void {
    if (this.#closed) throw closedSessionStateError();
  }
}
