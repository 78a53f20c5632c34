/**
 * What a 2026-07-28 client's conversation keeps between its stateless requests: the tools it promoted
 * with `tool_search`. Keyed by principal and conversation handle, in memory for one process or in
 * PostgreSQL for several replicas, so a request on any replica sees what an earlier one did (see
 * ARCHITECTURE.md, "The governed MCP gateway"). Grants, approval modes and recorded decisions are the
 * runtime's own session state, keyed by the conversation's session id and principal.
 */
import { migratePostgresSchema, type PostgresDatabase } from "../core/index.js";

/** The state of one conversation. */
export interface ConversationState {
  /** Model-visible name -> the definition hash it was promoted at (a `PromotionState`'s `promoted`). */
  promoted: Record<string, string>;
}

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
  /** Releases the store (not the database). Idempotent. */
  close(): Promise<void>;
}

const EMPTY: ConversationState = { promoted: {} };

/** Conversations in this process's memory, the default; another replica sees none of it. */
export class MemoryConversationStateStore implements ConversationStateStore {
  readonly #states = new Map<string, ConversationState>();
  readonly #max: number;

  /** @param maxConversations conversations kept at most (least recently written forgotten first) @default 10000 */
  constructor(maxConversations = 10_000) {
    this.#max = maxConversations;
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
];

/** Conversations in PostgreSQL, shared by every replica on the database. */
export class PostgresConversationStateStore implements ConversationStateStore {
  readonly #db: PostgresDatabase;

  private constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  /**
   * Opens the store, creating or upgrading its table.
   * @param db the open database (the caller closes it, after the store)
   * @returns the store
   */
  static async open(db: PostgresDatabase): Promise<PostgresConversationStateStore> {
    await migratePostgresSchema(db, { store: "gateway-conversations", migrations: MIGRATIONS });
    return new PostgresConversationStateStore(db);
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
