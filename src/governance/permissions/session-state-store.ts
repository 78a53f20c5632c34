/**
 * The session state port: per-session source switches and approval modes, and the human decisions
 * recorded for calls that have not run yet. Implementations must pass
 * `describeSessionStateStoreConformance` (in `sciencegate/testing/conformance`). See ARCHITECTURE.md "State: who
 * owns what".
 */
import { GovernanceError } from "../../core/index.js";
import type { Grant } from "./grant-store.js";
import type { ApprovalMode, PermissionDecision } from "./permission-types.js";

/** How an approval card ended without a human answer: it waited too long, or the app cancelled it. */
export type PendingEndSource = "wait_timeout" | "cancelled";

/**
 * One session's settings as a store lists them, for one principal or none: the approval mode (if set)
 * and, on the entry without a principal, the session's source switches (a switch belongs to the
 * session, a mode to the session and principal).
 */
export interface SessionStateEntry {
  sessionId: string;
  /** Whose approval mode this is; absent: the single user's entry, which also holds the switches. */
  principal?: string | undefined;
  /** The mode set for the session and principal; absent when never set (the policy's default applies). */
  approvalMode?: ApprovalMode | undefined;
  /** The source switches set for the session, ordered by source id (unset sources are not listed). */
  sourceSwitches: { sourceId: string; enabled: boolean }[];
}

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
 * A recorded decision as the store reads it back: `taken` once a `takeDecision` consumed it. A consumed
 * decision stays (until a `putDecision` about another call under its key, or until the store drops it:
 * the PostgreSQL store after a day, the memory store past its 10,000 most recent) as the mark that its
 * call runs: a replica that resumes the same call then waits for that call's row instead of asking
 * again or running it a second time.
 */
export type StoredDecision = RecordedDecision & { taken: boolean };

/**
 * Where session settings and recorded decisions live. Settings are read synchronously (the broker
 * checks a source switch on every call) from a local view that a shared store keeps current; writes
 * resolve once durable, and the writer reads its own writes at once. Decisions are read from the store
 * itself: `takeDecision` hands a decision to one caller only, across every replica, and keeps it as
 * taken. After `close()` the asynchronous methods reject with `UPSTREAM_UNAVAILABLE`; the synchronous
 * reads keep answering from the last view (a closing runtime may still list tools).
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
   * The approval mode of a session for one principal (none: the single user's), from the local view;
   * one principal's mode never applies to another's calls.
   * @returns the mode set, or `undefined` (the policy's default applies)
   */
  approvalMode(sessionId: string, principal?: string | undefined): ApprovalMode | undefined;
  /** Sets the approval mode of a session for one principal (none: the single user's). */
  setApprovalMode(sessionId: string, mode: ApprovalMode, principal?: string | undefined): Promise<void>;
  /**
   * Every session and principal with a mode or a switch set, from the local view (what `approvalMode`
   * and `sourceSwitch` answer), ordered by session id, then principal (none first); fresh copies.
   * Keeps answering after `close()`.
   */
  listSessions(): SessionStateEntry[];
  /**
   * Whether other processes share this state (a database every replica reads); `false` or absent:
   * it lives in this process only, so a mode or switch set elsewhere is not seen here.
   */
  readonly isShared?: boolean;
  /**
   * Records (or replaces) the decision waiting for a call (`permissionCallKey`), unless a decision
   * about the very same call (same `fingerprint`) was already taken: that one stays, atomically across
   * replicas, so the call cannot get a second decision to run again with.
   * @returns what the key now holds: `recorded` (`taken: false`), or the taken decision unchanged
   */
  putDecision(key: string, recorded: RecordedDecision): Promise<StoredDecision>;
  /** The decision of a call, waiting or taken, without consuming it. */
  peekDecision(key: string): Promise<StoredDecision | undefined>;
  /**
   * Consumes the decision of a call and returns it as it was: of concurrent callers on every replica,
   * exactly one gets it with `taken: false`; the others, and every later caller, get `taken: true`.
   */
  takeDecision(key: string): Promise<StoredDecision | undefined>;
  /**
   * Whether a decision may wait for a call (not yet taken), from the local view, without I/O: `false`
   * only when this replica has not heard of one (a shared store may learn of a new one after its
   * notification delay).
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

const MAX_TAKEN_IN_MEMORY = 10_000;

/**
 * A `SessionStateStore` in this process's memory: the default, for one process. Everything vanishes
 * with the process; another replica sees none of it (use `PostgresSessionStateStore` for that).
 * Decisions are copied in and out; the last 10,000 taken ones are kept.
 * @example
 * const state = new MemorySessionStateStore();
 * const permissions = new PermissionService({ ledgerWriter, state });
 * const sessions = new SessionSettings({ state });
 */
export class MemorySessionStateStore implements SessionStateStore {
  readonly #switches = new Map<string, Map<string, boolean>>();
  /** Modes by session, then principal (`""` for none). */
  readonly #modes = new Map<string, Map<string, ApprovalMode>>();
  readonly #decisions = new Map<string, { recorded: RecordedDecision; taken: boolean }>();
  /** Keys of taken decisions, oldest first (a taken decision is a mark, not a wait: bounded). */
  readonly #taken = new Set<string>();
  #closed = false;
  /** This process only. */
  readonly isShared = false;

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

  approvalMode(sessionId: string, principal?: string | undefined): ApprovalMode | undefined {
    return this.#modes.get(sessionId)?.get(principal ?? "");
  }

  async setApprovalMode(
    sessionId: string,
    mode: ApprovalMode,
    principal?: string | undefined,
  ): Promise<void> {
    this.#ensureOpen();
    let modes = this.#modes.get(sessionId);
    if (!modes) {
      modes = new Map();
      this.#modes.set(sessionId, modes);
    }
    modes.set(principal ?? "", mode);
  }

  listSessions(): SessionStateEntry[] {
    return listSessionEntries(this.#modes, this.#switches);
  }

  async putDecision(key: string, recorded: RecordedDecision): Promise<StoredDecision> {
    this.#ensureOpen();
    const known = this.#decisions.get(key);
    if (known?.taken && known.recorded.fingerprint === recorded.fingerprint) {
      return { ...structuredClone(known.recorded), taken: true };
    }
    this.#taken.delete(key);
    this.#decisions.set(key, { recorded: structuredClone(recorded), taken: false });
    return { ...structuredClone(recorded), taken: false };
  }

  async peekDecision(key: string): Promise<StoredDecision | undefined> {
    this.#ensureOpen();
    const entry = this.#decisions.get(key);
    return entry && { ...structuredClone(entry.recorded), taken: entry.taken };
  }

  async takeDecision(key: string): Promise<StoredDecision | undefined> {
    this.#ensureOpen();
    const entry = this.#decisions.get(key);
    if (!entry) return undefined;
    const stored = { ...structuredClone(entry.recorded), taken: entry.taken };
    entry.taken = true;
    this.#taken.add(key);
    for (const oldest of this.#taken) {
      if (this.#taken.size <= MAX_TAKEN_IN_MEMORY) break;
      this.#taken.delete(oldest);
      this.#decisions.delete(oldest);
    }
    return stored;
  }

  mayHoldDecision(key: string): boolean {
    return this.#decisions.get(key)?.taken === false;
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

/**
 * The entries of a local view: every session with a mode or a switch, ordered by session id, then
 * principal (the entry without one first, holding the switches, ordered by source id); the listing of
 * both stores.
 * @param modes each session's approval modes by principal (`""` for none)
 * @param switches each session's switches by source id
 * @returns fresh entries
 */
export function listSessionEntries(
  modes: ReadonlyMap<string, ReadonlyMap<string, ApprovalMode>>,
  switches: ReadonlyMap<string, ReadonlyMap<string, boolean>>,
): SessionStateEntry[] {
  const ids = [...new Set([...modes.keys(), ...switches.keys()])].sort(compareIds);
  return ids.flatMap((sessionId) => {
    const byPrincipal = modes.get(sessionId) ?? new Map<string, ApprovalMode>();
    const sourceSwitches = [...(switches.get(sessionId) ?? new Map<string, boolean>())]
      .sort(([a], [b]) => compareIds(a, b))
      .map(([sourceId, enabled]) => ({ sourceId, enabled }));
    const entries: SessionStateEntry[] = [];
    if (byPrincipal.has("") || sourceSwitches.length > 0) {
      entries.push({ sessionId, approvalMode: byPrincipal.get(""), sourceSwitches });
    }
    const principals = [...byPrincipal.keys()].filter((principal) => principal !== "").sort(compareIds);
    for (const principal of principals) {
      entries.push({ sessionId, principal, approvalMode: byPrincipal.get(principal), sourceSwitches: [] });
    }
    return entries;
  });
}

/** Code-unit order, the same on every machine (no locale). */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
