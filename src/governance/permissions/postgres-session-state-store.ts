/**
 * The session state of several replicas in one PostgreSQL database. Settings are read from a local
 * view, so the broker's per-call source check stays free of I/O; writes reach the database first.
 * Every write takes the next number of one clock row (whose lock makes numbers commit in order) and
 * sends `NOTIFY`; each replica then reads the rows numbered above what it has seen. A reload runs on
 * every (re)connect of the listener and a catch-up every `pollIntervalMs`, so a lost notification
 * leaves a replica stale for at most that long while the database answers. See ARCHITECTURE.md
 * "State: who owns what".
 */
import {
  GovernanceError,
  migratePostgresSchema,
  type PostgresDatabase,
  type PostgresListener,
} from "../../core/index.js";
import type { ApprovalMode } from "./permission-types.js";
import {
  closedSessionStateError,
  listSessionEntries,
  type RecordedDecision,
  type SessionStateEntry,
  type SessionStateStore,
  type StoredDecision,
} from "./session-state-store.js";

const STORE = "session-state";
const CHANNEL = "sciencegate_session_state";
const CLOCK = "sciencegate_session_state_clock";

/** Schema steps; step `i` takes the schema from version `i` to `i + 1`. Only ever append. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE ${CLOCK} (id BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (id), version BIGINT NOT NULL);
   INSERT INTO ${CLOCK} (id, version) VALUES (TRUE, 0);
   CREATE TABLE sciencegate_source_switches (
     session_id TEXT NOT NULL, source_id TEXT NOT NULL, enabled BOOLEAN NOT NULL, version BIGINT NOT NULL,
     PRIMARY KEY (session_id, source_id));
   CREATE INDEX sciencegate_source_switches_version ON sciencegate_source_switches (version);
   CREATE TABLE sciencegate_approval_modes (
     session_id TEXT PRIMARY KEY, mode TEXT NOT NULL, version BIGINT NOT NULL);
   CREATE INDEX sciencegate_approval_modes_version ON sciencegate_approval_modes (version);
   CREATE TABLE sciencegate_recorded_decisions (
     call_key TEXT PRIMARY KEY, recorded JSONB NOT NULL, version BIGINT NOT NULL,
     recorded_at TIMESTAMPTZ NOT NULL DEFAULT now());
   CREATE INDEX sciencegate_recorded_decisions_version ON sciencegate_recorded_decisions (version);`,
  // A taken decision stays as the mark that its call runs (`takes` counts the takes; 1 is the first).
  `ALTER TABLE sciencegate_recorded_decisions
     ADD COLUMN takes INTEGER NOT NULL DEFAULT 0, ADD COLUMN taken_at TIMESTAMPTZ;
   CREATE INDEX sciencegate_recorded_decisions_taken ON sciencegate_recorded_decisions (taken_at)
     WHERE taken_at IS NOT NULL;`,
  // A mode is a principal's (the empty string: the single user's): it never applies to another's calls.
  `ALTER TABLE sciencegate_approval_modes ADD COLUMN principal TEXT NOT NULL DEFAULT '';
   ALTER TABLE sciencegate_approval_modes DROP CONSTRAINT sciencegate_approval_modes_pkey;
   ALTER TABLE sciencegate_approval_modes ADD PRIMARY KEY (session_id, principal);`,
];

/** How long a taken decision is kept: far longer than any call takes to record its row. */
const TAKEN_RETENTION = "1 day";

/** Takes the next clock number (its row lock orders concurrent writers) in a CTE named `tick`. */
const TICK = `tick AS (UPDATE ${CLOCK} SET version = version + 1 RETURNING version)`;
/** Ends a write: notifies the other replicas (at commit) and returns the write's number. */
const NOTIFY = `SELECT version::text AS version, pg_notify('${CHANNEL}', version::text) FROM written`;

/** One snapshot of everything numbered above `$1`, plus the clock (what the snapshot includes). */
const CHANGES = `
  SELECT 's' AS kind, session_id AS id, source_id AS item, enabled::text AS value, version::text AS version
    FROM sciencegate_source_switches WHERE version > $1
  UNION ALL SELECT 'm', session_id, principal, mode, version::text FROM sciencegate_approval_modes WHERE version > $1
  UNION ALL SELECT 'd', call_key, NULL, NULL, version::text FROM sciencegate_recorded_decisions
    WHERE version > $1 AND takes = 0
  UNION ALL SELECT 'c', NULL, NULL, NULL, version::text FROM ${CLOCK}`;

const DEFAULT_DECISION_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const PURGE_INTERVAL_MS = 60 * 60 * 1000;
/**
 * Deletes the decisions recorded more than `$1` ms ago, and the marks of decisions taken more than
 * `TAKEN_RETENTION` ago (by the database clock).
 */
const PURGE_DECISIONS = `DELETE FROM sciencegate_recorded_decisions
  WHERE recorded_at < clock_timestamp() - make_interval(secs => $1::float8 / 1000)
     OR taken_at < clock_timestamp() - interval '${TAKEN_RETENTION}'`;

const APPROVAL_MODES: ReadonlySet<string> = new Set<ApprovalMode>(["ask_for_dangerous", "always_allow"]);

/** Options of `PostgresSessionStateStore.open`. */
export interface PostgresSessionStateStoreOptions {
  /**
   * Catch-up interval, in ms: the longest a replica stays stale when a notification is lost while the
   * database answers. @default 2000
   */
  pollIntervalMs?: number;
  /** Wait between reconnects of the listener, in ms. @default 1000 */
  reconnectDelayMs?: number;
  /** Decisions this replica remembers having heard of (oldest forgotten first). @default 10000 */
  maxDecisionHints?: number;
  /**
   * How long a recorded decision waits for its call, in ms (by the database clock). Older ones (the
   * thread was abandoned) are deleted when a replica opens the store and every hour after; such a call,
   * should its thread resume after all, asks its human again. The same purge drops the marks of
   * decisions taken more than a day ago. @default 604800000 (7 days)
   */
  decisionRetentionMs?: number;
  /** Background failures (lost listener, failed catch-up); the store keeps its last view. @default ignored */
  onError?: (error: unknown) => void;
}

type ChangeRow = {
  kind: string;
  id: string | null;
  item: string | null;
  value: string | null;
  version: string;
};

/**
 * A `SessionStateStore` shared by every replica on one PostgreSQL database: a source switched off, or
 * an approval mode set, on one replica applies on all of them (at once on the writer, within the
 * notification delay elsewhere, at most `pollIntervalMs` when a notification is lost), and a recorded
 * decision is consumed once across all of them. It does not close the database.
 * @example
 * const db = await openPostgres(process.env.DATABASE_URL!);
 * const state = await PostgresSessionStateStore.open(db);
 * const governance = await createGovernance({ sessionState: state });
 */
export class PostgresSessionStateStore implements SessionStateStore {
  readonly #db: PostgresDatabase;
  readonly #options: PostgresSessionStateStoreOptions;
  readonly #switches = new Map<string, Map<string, { enabled: boolean; version: number }>>();
  /** Modes by session, then principal (`""` for none). */
  readonly #modes = new Map<string, Map<string, { mode: ApprovalMode; version: number }>>();
  /** Call keys of decisions heard of, with their numbers (insertion order: oldest first). */
  #hints = new Map<string, number>();
  /** The clock number up to which this view includes every change. */
  #seen = 0;
  #listener: PostgresListener | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #purgeTimer: ReturnType<typeof setInterval> | undefined;
  #catchingUp: Promise<void> | undefined;
  #again = false;
  #closed = false;
  /** Every replica on the database reads the same state. */
  readonly isShared = true;

  private constructor(db: PostgresDatabase, options: PostgresSessionStateStoreOptions) {
    this.#db = db;
    this.#options = options;
  }

  /**
   * Migrates the schema, loads the current state and starts following changes.
   * @param db the open database (stays the caller's to close, after this store)
   * @param options catch-up interval, reconnect delay, hint bound, error callback
   * @returns the open store
   * @throws GovernanceError `INVALID_CONFIG` when the database has a newer schema or
   *   `decisionRetentionMs` is not a positive integer; whatever the first connection throws
   */
  static async open(
    db: PostgresDatabase,
    options: PostgresSessionStateStoreOptions = {},
  ): Promise<PostgresSessionStateStore> {
    const retentionMs = options.decisionRetentionMs ?? DEFAULT_DECISION_RETENTION_MS;
    if (!Number.isSafeInteger(retentionMs) || retentionMs <= 0) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        `PostgresSessionStateStore decisionRetentionMs must be a positive integer of milliseconds; got ${String(options.decisionRetentionMs)}.`,
      );
    }
    await migratePostgresSchema(db, { store: STORE, migrations: MIGRATIONS });
    await db.query(PURGE_DECISIONS, [retentionMs]);
    const store = new PostgresSessionStateStore(db, options);
    store.#listener = await db.listen(
      CHANNEL,
      {
        onNotification: (payload) => {
          if (!(Number(payload) <= store.#seen)) store.#catchUp(false).catch(store.#report);
        },
        // Whatever changed while nobody listened: read everything again.
        onConnect: () => store.#catchUp(true),
        onError: store.#report,
      },
      options.reconnectDelayMs === undefined ? {} : { reconnectDelayMs: options.reconnectDelayMs },
    );
    store.#timer = setInterval(
      () => store.#catchUp(false).catch(store.#report),
      options.pollIntervalMs ?? 2000,
    );
    store.#timer.unref?.();
    store.#purgeTimer = setInterval(
      () => db.query(PURGE_DECISIONS, [retentionMs]).catch(store.#report),
      Math.min(retentionMs, PURGE_INTERVAL_MS),
    );
    store.#purgeTimer.unref?.();
    return store;
  }

  sourceSwitch(sessionId: string, sourceId: string): boolean | undefined {
    return this.#switches.get(sessionId)?.get(sourceId)?.enabled;
  }

  async setSourceSwitch(sessionId: string, sourceId: string, enabled: boolean): Promise<void> {
    this.#ensureOpen();
    const version = await this.#write(
      `INSERT INTO sciencegate_source_switches (session_id, source_id, enabled, version)
       SELECT $1, $2, $3, version FROM tick
       ON CONFLICT (session_id, source_id) DO UPDATE SET enabled = EXCLUDED.enabled, version = EXCLUDED.version
       RETURNING version`,
      [sessionId, sourceId, enabled],
    );
    this.#applySwitch(sessionId, sourceId, enabled, version);
  }

  approvalMode(sessionId: string, principal?: string | undefined): ApprovalMode | undefined {
    return this.#modes.get(sessionId)?.get(principal ?? "")?.mode;
  }

  async setApprovalMode(
    sessionId: string,
    mode: ApprovalMode,
    principal?: string | undefined,
  ): Promise<void> {
    this.#ensureOpen();
    if (!APPROVAL_MODES.has(mode)) {
      throw new GovernanceError("INVALID_INPUT", `Unknown approval mode '${String(mode)}'.`);
    }
    const version = await this.#write(
      `INSERT INTO sciencegate_approval_modes (session_id, principal, mode, version)
       SELECT $1, $2, $3, version FROM tick
       ON CONFLICT (session_id, principal) DO UPDATE SET mode = EXCLUDED.mode, version = EXCLUDED.version
       RETURNING version`,
      [sessionId, principal ?? "", mode],
    );
    this.#applyMode(sessionId, principal ?? "", mode, version);
  }

  listSessions(): SessionStateEntry[] {
    const modes = new Map(
      [...this.#modes].map(([id, byPrincipal]) => [
        id,
        new Map([...byPrincipal].map(([principal, { mode }]) => [principal, mode] as const)),
      ]),
    );
    const switches = new Map(
      [...this.#switches].map(([id, map]) => [
        id,
        new Map([...map].map(([source, { enabled }]) => [source, enabled] as const)),
      ]),
    );
    return listSessionEntries(modes, switches);
  }

  async putDecision(key: string, recorded: RecordedDecision): Promise<StoredDecision> {
    this.#ensureOpen();
    // Under the row's lock, like a take: a decision of the same call taken meanwhile is kept.
    const version = await this.#write(
      `INSERT INTO sciencegate_recorded_decisions (call_key, recorded, version)
       SELECT $1, $2::jsonb, version FROM tick
       ON CONFLICT (call_key) DO UPDATE
         SET recorded = EXCLUDED.recorded, version = EXCLUDED.version, recorded_at = now(),
             takes = 0, taken_at = NULL
         WHERE sciencegate_recorded_decisions.takes = 0
           OR sciencegate_recorded_decisions.recorded->>'fingerprint' IS DISTINCT FROM $3
       RETURNING version`,
      [key, JSON.stringify(recorded), recorded.fingerprint],
    );
    if (Number.isNaN(version)) {
      const kept = await this.peekDecision(key);
      if (kept !== undefined) return kept;
      throw new GovernanceError(
        "UPSTREAM_UNAVAILABLE",
        `The decision of call '${key}' could not be recorded.`,
      );
    }
    this.#hint(key, version);
    return { ...recorded, taken: false };
  }

  async peekDecision(key: string): Promise<StoredDecision | undefined> {
    this.#ensureOpen();
    const [row] = await this.#db.query<{ recorded: unknown; taken: boolean }>(
      "SELECT recorded, takes > 0 AS taken FROM sciencegate_recorded_decisions WHERE call_key = $1",
      [key],
    );
    return row && { ...toRecorded(row.recorded, key), taken: row.taken };
  }

  async takeDecision(key: string): Promise<StoredDecision | undefined> {
    this.#ensureOpen();
    // One statement under the row's lock: of concurrent takers on any replica, only one counts 1.
    const [row] = await this.#db.query<{ recorded: unknown; taken: boolean }>(
      `UPDATE sciencegate_recorded_decisions SET takes = takes + 1, taken_at = coalesce(taken_at, now())
       WHERE call_key = $1 RETURNING recorded, takes > 1 AS taken`,
      [key],
    );
    this.#hints.delete(key);
    return row && { ...toRecorded(row.recorded, key), taken: row.taken };
  }

  mayHoldDecision(key: string): boolean {
    return this.#hints.has(key);
  }

  async sync(): Promise<void> {
    this.#ensureOpen();
    await this.#catchUp(false);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    clearInterval(this.#purgeTimer);
    await this.#listener?.close();
  }

  /** Runs one write CTE (`written`, after `tick`) and returns its clock number. */
  async #write(written: string, params: readonly (string | boolean)[]): Promise<number> {
    const [row] = await this.#db.query<{ version: string }>(
      `WITH ${TICK}, written AS (${written}) ${NOTIFY}`,
      params,
    );
    return Number(row?.version);
  }

  /**
   * Reads what changed above the view's clock number (everything when `full`), one at a time: a
   * request while one runs makes it run once more afterwards.
   */
  #catchUp(full: boolean): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#catchingUp && !full) {
      this.#again = true;
      return this.#catchingUp;
    }
    const run = (async () => {
      await this.#catchingUp?.catch(() => {});
      let everything = full;
      do {
        this.#again = false;
        await this.#load(everything);
        everything = false;
      } while (this.#again && !this.#closed);
    })();
    const done = run.finally(() => {
      if (this.#catchingUp === done) this.#catchingUp = undefined;
    });
    this.#catchingUp = done;
    return done;
  }

  async #load(full: boolean): Promise<void> {
    const rows = await this.#db.query<ChangeRow>(CHANGES, [full ? "0" : String(this.#seen)]);
    let clock = this.#seen;
    const decisions = new Map<string, number>();
    for (const row of rows) {
      const version = Number(row.version);
      if (row.kind === "c") clock = version;
      else if (row.kind === "s" && row.id !== null && row.item !== null) {
        this.#applySwitch(row.id, row.item, row.value === "true", version);
      } else if (row.kind === "m" && row.id !== null && APPROVAL_MODES.has(row.value ?? "")) {
        this.#applyMode(row.id, row.item ?? "", row.value as ApprovalMode, version);
      } else if (row.kind === "d" && row.id !== null) decisions.set(row.id, version);
    }
    if (full) {
      // Decisions taken elsewhere are forgotten; those recorded here after the snapshot are kept.
      for (const [key, version] of this.#hints) if (version > clock) decisions.set(key, version);
      this.#hints = new Map();
    }
    for (const [key, version] of decisions) this.#hint(key, version);
    this.#seen = Math.max(this.#seen, clock);
  }

  #applySwitch(sessionId: string, sourceId: string, enabled: boolean, version: number): void {
    let map = this.#switches.get(sessionId);
    if (!map) {
      map = new Map();
      this.#switches.set(sessionId, map);
    }
    const known = map.get(sourceId);
    if (!known || known.version < version) map.set(sourceId, { enabled, version });
  }

  #applyMode(sessionId: string, principal: string, mode: ApprovalMode, version: number): void {
    let byPrincipal = this.#modes.get(sessionId);
    if (!byPrincipal) {
      byPrincipal = new Map();
      this.#modes.set(sessionId, byPrincipal);
    }
    const known = byPrincipal.get(principal);
    if (!known || known.version < version) byPrincipal.set(principal, { mode, version });
  }

  #hint(key: string, version: number): void {
    this.#hints.delete(key);
    this.#hints.set(key, version);
    const max = this.#options.maxDecisionHints ?? 10_000;
    for (const oldest of this.#hints.keys()) {
      if (this.#hints.size <= max) break;
      this.#hints.delete(oldest);
    }
  }

  readonly #report = (error: unknown): void => {
    if (!this.#closed) this.#options.onError?.(error);
  };

  #ensureOpen(): void {
    if (this.#closed) throw closedSessionStateError();
  }
}

function toRecorded(value: unknown, key: string): RecordedDecision {
  const recorded = value as Partial<RecordedDecision> | null;
  if (typeof recorded?.fingerprint !== "string" || typeof recorded.result?.authorizationId !== "string") {
    throw new GovernanceError(
      "UPSTREAM_UNAVAILABLE",
      `The recorded decision of call '${key}' in PostgreSQL is malformed; delete its row from sciencegate_recorded_decisions.`,
    );
  }
  return recorded as RecordedDecision;
}
