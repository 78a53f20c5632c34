/**
 * What a 2026-07-28 client's conversation keeps between its stateless requests: the tools it promoted
 * with `tool_search`, and the papers it extracted (each paper's resource and text, bounded in count and
 * bytes so that a hostile client only pushes out its own oldest papers). Keyed by principal and
 * conversation handle, in memory for one process or in PostgreSQL for several replicas, so a request on
 * any replica sees what an earlier one did (see ARCHITECTURE.md, "The governed MCP gateway"). Grants,
 * approval modes and recorded decisions are the runtime's own session state, keyed by the
 * conversation's session id and principal.
 */
import { migratePostgresSchema, type PostgresDatabase } from "../core/index.js";

/** The state of one conversation. */
export interface ConversationState {
  /** Model-visible name -> the definition hash it was promoted at (a `PromotionState`'s `promoted`). */
  promoted: Record<string, string>;
}

/** A paper resource of a conversation (the MCP `Resource` the gateway lists). */
export interface ConversationPaperResource {
  uri: string;
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  mimeType?: string | undefined;
}

/** A paper a conversation extracted: its resource and its text. */
export interface ConversationPaper {
  resource: ConversationPaperResource;
  /** The extracted Markdown. */
  text: string;
}

/** How much paper text the store keeps; past a bound the oldest papers are forgotten first. */
export interface ConversationPaperLimits {
  /** Papers one conversation keeps. @default 32 */
  maxPapers?: number | undefined;
  /** UTF-8 bytes of one paper's text; a larger paper is not kept. @default 8 MiB */
  maxPaperBytes?: number | undefined;
  /**
   * UTF-8 bytes of text kept in all: per principal in PostgreSQL (one user never pushes out another's
   * papers), for the whole process in memory. @default 64 MiB in PostgreSQL, 256 MiB in memory
   */
  maxBytes?: number | undefined;
}

/** What `addPaper` did. */
export type AddPaperOutcome = "added" | "known" | "too_large";

/** Where conversations keep their state. */
export interface ConversationStateStore {
  /** @returns the conversation's state, or `undefined` before its first write */
  get(key: string): Promise<ConversationState | undefined>;
  /**
   * Changes a conversation's state atomically (concurrent changes on any replica all apply).
   * @param key the conversation's key
   * @param change the new state from the current one (an empty state before the first write)
   * @returns the state written
   */
  update(key: string, change: (current: ConversationState) => ConversationState): Promise<ConversationState>;
  /**
   * Keeps a paper of a conversation (an earlier one of the same uri stays as it is), then forgets the
   * oldest papers past the bounds.
   * @param key the conversation's key
   * @param owner who the conversation belongs to (a digest of its principal): the byte bound's account
   * @param paper the resource and its text
   * @returns `added`, `known` (kept already), or `too_large` (over `maxPaperBytes`; not kept)
   */
  addPaper(key: string, owner: string, paper: ConversationPaper): Promise<AddPaperOutcome>;
  /** @returns the conversation's paper resources, oldest first */
  listPapers(key: string): Promise<ConversationPaperResource[]>;
  /** @returns one paper of the conversation, or `undefined` when it has none by that uri */
  readPaper(key: string, uri: string): Promise<ConversationPaper | undefined>;
  /** Releases the store (not the database). Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link MemoryConversationStateStore}. */
export interface MemoryConversationStateStoreOptions {
  /** Conversations kept at most (least recently written forgotten first). @default 10000 */
  maxConversations?: number | undefined;
  /** The papers' bounds (`maxBytes` for the whole process). */
  papers?: ConversationPaperLimits | undefined;
}

const MiB = 1024 * 1024;

/** The bounds with their defaults. */
function paperLimits(limits: ConversationPaperLimits | undefined, maxBytes: number) {
  return {
    maxPapers: limits?.maxPapers ?? 32,
    maxPaperBytes: limits?.maxPaperBytes ?? 8 * MiB,
    maxBytes: limits?.maxBytes ?? maxBytes,
  };
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

const EMPTY: ConversationState = { promoted: {} };

interface KeptPaper extends ConversationPaper {
  key: string;
  bytes: number;
}

/** Conversations in this process's memory, the default; another replica sees none of it. */
export class MemoryConversationStateStore implements ConversationStateStore {
  readonly #states = new Map<string, ConversationState>();
  readonly #max: number;
  /** Every conversation's papers, oldest first, by `<key> <uri>`. */
  readonly #papers = new Map<string, KeptPaper>();
  #paperBytes = 0;
  readonly #limits: ReturnType<typeof paperLimits>;

  /**
   * @param options conversations kept at most (a number: `maxConversations`, least recently written
   *   forgotten first; default 10000) and the papers' bounds
   */
  constructor(options: number | MemoryConversationStateStoreOptions = {}) {
    const given = typeof options === "number" ? { maxConversations: options } : options;
    this.#max = given.maxConversations ?? 10_000;
    this.#limits = paperLimits(given.papers, 256 * MiB);
  }

  async addPaper(key: string, _owner: string, paper: ConversationPaper): Promise<AddPaperOutcome> {
    const bytes = byteLength(paper.text);
    if (bytes > this.#limits.maxPaperBytes) return "too_large";
    const id = `${key} ${paper.resource.uri}`;
    if (this.#papers.has(id)) return "known";
    this.#papers.set(id, { ...structuredClone(paper), key, bytes });
    this.#paperBytes += bytes;
    const own = [...this.#papers].filter(([, kept]) => kept.key === key);
    for (const [oldest] of own.slice(0, Math.max(0, own.length - this.#limits.maxPapers)))
      this.#forget(oldest);
    for (const oldest of this.#papers.keys()) {
      if (this.#paperBytes <= this.#limits.maxBytes) break;
      this.#forget(oldest);
    }
    return "added";
  }

  async listPapers(key: string): Promise<ConversationPaperResource[]> {
    return [...this.#papers.values()]
      .filter((kept) => kept.key === key)
      .map((kept) => structuredClone(kept.resource));
  }

  async readPaper(key: string, uri: string): Promise<ConversationPaper | undefined> {
    const kept = this.#papers.get(`${key} ${uri}`);
    return kept && { resource: structuredClone(kept.resource), text: kept.text };
  }

  #forget(id: string): void {
    const kept = this.#papers.get(id);
    if (kept === undefined) return;
    this.#papers.delete(id);
    this.#paperBytes -= kept.bytes;
  }

  async get(key: string): Promise<ConversationState | undefined> {
    const state = this.#states.get(key);
    return state && structuredClone(state);
  }

  async update(
    key: string,
    change: (current: ConversationState) => ConversationState,
  ): Promise<ConversationState> {
    const next = change(structuredClone(this.#states.get(key) ?? EMPTY));
    this.#states.delete(key);
    this.#states.set(key, structuredClone(next));
    for (const oldest of this.#states.keys()) {
      if (this.#states.size <= this.#max) break;
      this.#states.delete(oldest);
    }
    return next;
  }

  async close(): Promise<void> {}
}

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE sciencegate_gateway_conversations (
     conversation_key TEXT PRIMARY KEY, state JSONB NOT NULL,
     updated_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
  `CREATE TABLE sciencegate_gateway_papers (
     conversation_key TEXT NOT NULL, uri TEXT NOT NULL, owner TEXT NOT NULL,
     resource JSONB NOT NULL, text TEXT NOT NULL, bytes INTEGER NOT NULL,
     seq BIGSERIAL NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
     PRIMARY KEY (conversation_key, uri))`,
  "CREATE INDEX sciencegate_gateway_papers_owner ON sciencegate_gateway_papers (owner, seq)",
];

/** Options of {@link PostgresConversationStateStore.open}. */
export interface PostgresConversationStateStoreOptions {
  /** The papers' bounds (`maxBytes` per principal). */
  papers?: ConversationPaperLimits | undefined;
}

/** Conversations in PostgreSQL, shared by every replica on the database. */
export class PostgresConversationStateStore implements ConversationStateStore {
  readonly #db: PostgresDatabase;
  readonly #limits: ReturnType<typeof paperLimits>;

  private constructor(db: PostgresDatabase, options: PostgresConversationStateStoreOptions) {
    this.#db = db;
    this.#limits = paperLimits(options.papers, 64 * MiB);
  }

  /**
   * Opens the store, creating or upgrading its tables.
   * @param db the open database (the caller closes it, after the store)
   * @param options the papers' bounds
   * @returns the store
   */
  static async open(
    db: PostgresDatabase,
    options: PostgresConversationStateStoreOptions = {},
  ): Promise<PostgresConversationStateStore> {
    await migratePostgresSchema(db, { store: "gateway-conversations", migrations: MIGRATIONS });
    return new PostgresConversationStateStore(db, options);
  }

  addPaper(key: string, owner: string, paper: ConversationPaper): Promise<AddPaperOutcome> {
    const bytes = byteLength(paper.text);
    if (bytes > this.#limits.maxPaperBytes) return Promise.resolve("too_large");
    return this.#db.transaction(async (sql) => {
      // One owner's papers are counted by one writer at a time, on any replica.
      await sql.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`sciencegate-papers:${owner}`]);
      const inserted = await sql.query<{ seq: string }>(
        `INSERT INTO sciencegate_gateway_papers (conversation_key, uri, owner, resource, text, bytes)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (conversation_key, uri) DO NOTHING RETURNING seq`,
        [key, paper.resource.uri, owner, JSON.stringify(paper.resource), paper.text, bytes],
      );
      if (inserted.length === 0) return "known";
      await sql.query(
        `DELETE FROM sciencegate_gateway_papers WHERE conversation_key = $1 AND seq NOT IN (
           SELECT seq FROM sciencegate_gateway_papers WHERE conversation_key = $1 ORDER BY seq DESC LIMIT $2)`,
        [key, this.#limits.maxPapers],
      );
      await sql.query(
        `DELETE FROM sciencegate_gateway_papers WHERE owner = $1 AND seq IN (
           SELECT seq FROM (SELECT seq, SUM(bytes) OVER (ORDER BY seq DESC) AS kept
                            FROM sciencegate_gateway_papers WHERE owner = $1) AS newest_first
           WHERE kept > $2)`,
        [owner, this.#limits.maxBytes],
      );
      return "added";
    });
  }

  async listPapers(key: string): Promise<ConversationPaperResource[]> {
    const rows = await this.#db.query<{ resource: ConversationPaperResource }>(
      "SELECT resource FROM sciencegate_gateway_papers WHERE conversation_key = $1 ORDER BY seq",
      [key],
    );
    return rows.map((row) => row.resource);
  }

  async readPaper(key: string, uri: string): Promise<ConversationPaper | undefined> {
    const [row] = await this.#db.query<ConversationPaper>(
      "SELECT resource, text FROM sciencegate_gateway_papers WHERE conversation_key = $1 AND uri = $2",
      [key, uri],
    );
    return row && { resource: row.resource, text: row.text };
  }

  async get(key: string): Promise<ConversationState | undefined> {
    const [row] = await this.#db.query<{ state: ConversationState }>(
      "SELECT state FROM sciencegate_gateway_conversations WHERE conversation_key = $1",
      [key],
    );
    return row?.state;
  }

  update(key: string, change: (current: ConversationState) => ConversationState): Promise<ConversationState> {
    return this.#db.transaction(async (sql) => {
      // The row exists before it is locked, so two first writers serialise on it too.
      await sql.query(
        `INSERT INTO sciencegate_gateway_conversations (conversation_key, state) VALUES ($1, $2)
         ON CONFLICT (conversation_key) DO NOTHING`,
        [key, JSON.stringify(EMPTY)],
      );
      const [row] = await sql.query<{ state: ConversationState }>(
        "SELECT state FROM sciencegate_gateway_conversations WHERE conversation_key = $1 FOR UPDATE",
        [key],
      );
      const next = change(row?.state ?? structuredClone(EMPTY));
      await sql.query(
        "UPDATE sciencegate_gateway_conversations SET state = $2, updated_at = now() WHERE conversation_key = $1",
        [key, JSON.stringify(next)],
      );
      return next;
    });
  }

  async close(): Promise<void> {}
}
