/**
 * The grant store port: session grants and each session's permission epoch.
 * Implementations must pass `describeGrantStoreConformance` (in `sciencegate/testing/conformance`).
 */
import { GovernanceError } from "../../core/index.js";

/** A session grant: later calls of the same action in the same scope (the card's `matchingScope`) need no card. */
export interface Grant {
  id: string;
  sessionId: string;
  /**
   * Whose grant it is: it covers only this principal's calls (absent: the single user's, which no
   * principal's call matches either).
   */
  principal?: string | undefined;
  /** The permission action the grant covers, e.g. `pubmed:search`. */
  action: string;
  /** The grant scope (exact key), e.g. `pubmed:search`, `artifact:arxiv` or `filesystem:write_file:dir:/tmp/x`. */
  resource: string;
  /** ISO-8601 timestamp. */
  createdAt: string;
  /** The tool definition the human approved; a call of a changed definition is not covered. */
  toolDefinitionHash: string;
}

/** What identifies a grant: a session, a principal, an action, a scope and a tool definition. */
export type GrantKey = Pick<Grant, "sessionId" | "principal" | "action" | "resource" | "toolDefinitionHash">;

/** Which grants `GrantStore.list` returns: all, or one session's, one principal's, or both. */
export interface GrantListOptions {
  sessionId?: string | undefined;
  principal?: string | undefined;
}

/** The grant store port. Methods reject with `UPSTREAM_UNAVAILABLE` after `close()`. */
export interface GrantStore {
  /**
   * Creates the grant unless one with the same key exists (then returns that one, unchanged), in one
   * atomic step: two concurrent callers get the same grant. Grants of the same session, principal,
   * action and resource bound to another definition hash are stale and removed.
   * @returns the stored grant and whether this call created it
   * @throws GovernanceError `INVALID_INPUT` for an empty field
   */
  ensure(grant: Grant): Promise<{ grant: Grant; created: boolean }>;
  /** The grant with exactly this key (an absent principal matches only grants without one), or `undefined`. */
  find(key: GrantKey): Promise<Grant | undefined>;
  /** Grants ordered by creation (ties in insertion order), optionally of one session and/or principal. */
  list(options?: GrantListOptions): Promise<Grant[]>;
  /** Removes a grant; resolves to the removed grant, or `undefined` when the id is unknown. */
  revoke(id: string): Promise<Grant | undefined>;
  /** Increments and returns the session's permission epoch (atomic; the first call returns 1). */
  nextEpoch(sessionId: string): Promise<number>;
  /** The session's current epoch (0 before the first authorization). */
  currentEpoch(sessionId: string): Promise<number>;
  /** Releases the store. Idempotent. */
  close(): Promise<void>;
}

const GRANT_FIELDS = ["id", "sessionId", "action", "resource", "createdAt", "toolDefinitionHash"] as const;

/**
 * A clean copy of a grant (known fields only), checked.
 * @param grant the grant to check
 * @returns the copy
 * @throws GovernanceError `INVALID_INPUT` naming every empty or non-string field
 */
export function normalizeGrant(grant: Grant): Grant {
  const out: Record<string, string> = {};
  const bad: string[] = [];
  for (const field of GRANT_FIELDS) {
    const value = (grant as unknown as Record<string, unknown> | null)?.[field];
    if (typeof value === "string" && value !== "") out[field] = value;
    else bad.push(field);
  }
  const { principal } = (grant ?? {}) as Partial<Grant>;
  if (principal !== undefined && principal !== "") {
    if (typeof principal === "string") out.principal = principal;
    else bad.push("principal");
  }
  if (bad.length > 0) {
    throw new GovernanceError(
      "INVALID_INPUT",
      `Invalid grant: ${bad.join(", ")} must be non-empty strings.`,
      {
        data: { issues: bad.map((path) => ({ path, message: "must be a non-empty string" })) },
      },
    );
  }
  return out as unknown as Grant;
}

/**
 * The error every grant store method throws once the store is closed.
 * @returns an `UPSTREAM_UNAVAILABLE` error
 */
export function closedGrantStoreError(): GovernanceError {
  return new GovernanceError("UPSTREAM_UNAVAILABLE", "The grant store is closed.");
}

/**
 * A grant from a table row of the SQL stores (`id`, `session_id`, `principal` (empty: none), `action`,
 * `resource`, `created_at`, `tool_definition_hash`).
 * @param row the row
 * @returns the grant
 */
export function grantFromRow(row: Record<string, unknown>): Grant {
  return {
    id: String(row.id),
    sessionId: String(row.session_id),
    ...(typeof row.principal === "string" && row.principal !== "" ? { principal: row.principal } : {}),
    action: String(row.action),
    resource: String(row.resource),
    createdAt: String(row.created_at),
    toolDefinitionHash: String(row.tool_definition_hash),
  };
}

/**
 * The stored form of a grant's principal in the SQL stores: the empty string for none, so that the
 * single user's grants have a key like everyone else's.
 * @param key a grant or key
 */
export function principalColumn(key: Pick<Grant, "principal">): string {
  return key.principal ?? "";
}

function sameKey(a: GrantKey, b: GrantKey): boolean {
  return (
    a.sessionId === b.sessionId &&
    principalColumn(a) === principalColumn(b) &&
    a.action === b.action &&
    a.resource === b.resource &&
    a.toolDefinitionHash === b.toolDefinitionHash
  );
}

/**
 * A `GrantStore` held in memory; grants vanish with the process. Grants are copied in and out.
 * @example
 * const permissions = new PermissionService({ ledgerWriter: new LedgerWriter(new MemoryLedger()), grants: new MemoryGrantStore() });
 */
export class MemoryGrantStore implements GrantStore {
  #grants: Grant[] = [];
  readonly #epochs = new Map<string, number>();
  #closed = false;

  async ensure(grant: Grant): Promise<{ grant: Grant; created: boolean }> {
    this.#ensureOpen();
    const clean = normalizeGrant(grant);
    const existing = this.#grants.find((g) => sameKey(g, clean));
    if (existing) return { grant: { ...existing }, created: false };
    this.#grants = this.#grants.filter(
      (g) =>
        !(
          g.sessionId === clean.sessionId &&
          principalColumn(g) === principalColumn(clean) &&
          g.action === clean.action &&
          g.resource === clean.resource
        ),
    );
    this.#grants.push(clean);
    return { grant: { ...clean }, created: true };
  }

  async find(key: GrantKey): Promise<Grant | undefined> {
    this.#ensureOpen();
    const found = this.#grants.find((g) => sameKey(g, key));
    return found && { ...found };
  }

  async list(options: GrantListOptions = {}): Promise<Grant[]> {
    this.#ensureOpen();
    const { sessionId, principal } = options;
    return this.#grants
      .map((grant, index) => ({ grant, index }))
      .filter(({ grant }) => !sessionId || grant.sessionId === sessionId)
      .filter(({ grant }) => !principal || grant.principal === principal)
      .sort((a, b) => Date.parse(a.grant.createdAt) - Date.parse(b.grant.createdAt) || a.index - b.index)
      .map(({ grant }) => ({ ...grant }));
  }

  async revoke(id: string): Promise<Grant | undefined> {
    this.#ensureOpen();
    const found = this.#grants.find((g) => g.id === id);
    if (found) this.#grants = this.#grants.filter((g) => g !== found);
    return found && { ...found };
  }

  async nextEpoch(sessionId: string): Promise<number> {
    this.#ensureOpen();
    const next = (this.#epochs.get(sessionId) ?? 0) + 1;
    this.#epochs.set(sessionId, next);
    return next;
  }

  async currentEpoch(sessionId: string): Promise<number> {
    this.#ensureOpen();
    return this.#epochs.get(sessionId) ?? 0;
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #ensureOpen(): void {
    if (this.#closed) throw closedGrantStoreError();
  }
}
