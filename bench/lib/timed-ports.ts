/**
 * Decorators of the broker's injected ports (content store, ledger, server pool) that report their
 * time to a `PhaseTimer`, and a gauge of concurrent MCP calls. They only delegate, so the broker under
 * test runs exactly its production code.
 */
import type { ContentRef, ContentStore } from "../../src/governance/audit/content-store.js";
import type {
  AuthorizationListOptions,
  AuthorizationRecord,
  InvocationRecord,
  LedgerActivityBucket,
  LedgerBatchOptions,
  LedgerObjects,
  LedgerQuery,
  LedgerStore,
  LedgerSummary,
  LedgerWrite,
  LedgerWriteResult,
} from "../../src/governance/audit/ledger.js";
import type { ToolServerPool } from "../../src/mcp/types.js";
import type { PhaseTimer } from "./phase-timer.js";

/** Phase names reported by the decorators. */
export const PHASES = {
  casWrite: "CAS write",
  casRead: "CAS read",
  ledgerAppend: "ledger commit (one per group of rows)",
  ledgerLookup: "ledger lookup",
  mcpCall: "MCP call (pool)",
} as const;

/** A `ContentStore` that times writes and reads. */
export class TimedContentStore implements ContentStore {
  readonly #inner: ContentStore;
  readonly #timer: PhaseTimer;

  /**
   * @param inner the real store
   * @param timer where durations go
   */
  constructor(inner: ContentStore, timer: PhaseTimer) {
    this.#inner = inner;
    this.#timer = timer;
  }

  put(data: string | Uint8Array): Promise<ContentRef> {
    return this.#timer.time(PHASES.casWrite, () => this.#inner.put(data));
  }

  putJson(value: unknown): Promise<ContentRef> {
    return this.#timer.time(PHASES.casWrite, () => this.#inner.putJson(value));
  }

  get(ref: string): Promise<Uint8Array> {
    return this.#timer.time(PHASES.casRead, () => this.#inner.get(ref));
  }

  getJson<T = unknown>(ref: string): Promise<T> {
    return this.#timer.time(PHASES.casRead, () => this.#inner.getJson<T>(ref));
  }

  has(ref: string): Promise<boolean> {
    return this.#inner.has(ref);
  }

  verify(ref: string): Promise<boolean> {
    return this.#inner.verify(ref);
  }
}

/** A `LedgerStore` that times commits and call lookups. */
export class TimedLedger implements LedgerStore {
  readonly #inner: LedgerStore;
  readonly #timer: PhaseTimer;

  /**
   * @param inner the real store
   * @param timer where durations go
   */
  constructor(inner: LedgerStore, timer: PhaseTimer) {
    this.#inner = inner;
    this.#timer = timer;
  }

  /** The inner store's objects, so the broker keeps small objects inline exactly as without the timer. */
  get objects(): LedgerObjects | undefined {
    return this.#inner.objects;
  }

  appendBatch(writes: readonly LedgerWrite[], options?: LedgerBatchOptions): Promise<LedgerWriteResult[]> {
    // One commit of the writer's group: shared by every call whose row is in the batch.
    return this.#timer.time(PHASES.ledgerAppend, () => this.#inner.appendBatch(writes, options));
  }

  get(invocationId: string): Promise<InvocationRecord | undefined> {
    return this.#inner.get(invocationId);
  }

  findByCall(threadId: string, toolCallId: string): Promise<InvocationRecord | undefined> {
    return this.#timer.time(PHASES.ledgerLookup, () => this.#inner.findByCall(threadId, toolCallId));
  }

  query(query?: LedgerQuery): Promise<InvocationRecord[]> {
    return this.#inner.query(query);
  }

  count(query?: LedgerQuery): Promise<number> {
    return this.#inner.count(query);
  }

  activity(query: LedgerQuery & { bucketMs: number }): Promise<LedgerActivityBucket[]> {
    return this.#inner.activity(query);
  }

  summary(options?: { sessionId?: string }): Promise<LedgerSummary> {
    return this.#inner.summary(options);
  }

  getAuthorization(id: string): Promise<AuthorizationRecord | undefined> {
    return this.#inner.getAuthorization(id);
  }

  listAuthorizations(options?: AuthorizationListOptions): Promise<AuthorizationRecord[]> {
    return this.#inner.listAuthorizations(options);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

/** How many MCP calls were in flight at once. */
export interface InFlightGauge {
  current: number;
  max: number;
}

/**
 * A pool whose `callTool` is timed and counted; every other method is the inner pool's.
 * @param inner the real pool
 * @param timer where durations go
 * @param gauge updated on every call start and end (always, also while the timer is off)
 * @returns the decorated pool
 */
export function timedPool(inner: ToolServerPool, timer: PhaseTimer, gauge: InFlightGauge): ToolServerPool {
  return {
    serverIds: () => inner.serverIds(),
    state: (id) => inner.state(id),
    listTools: (id) => inner.listTools(id),
    onToolsChanged: (listener) => inner.onToolsChanged(listener),
    close: () => inner.close(),
    callTool: async (id, name, args, options) => {
      gauge.current += 1;
      gauge.max = Math.max(gauge.max, gauge.current);
      try {
        return await timer.time(PHASES.mcpCall, () => inner.callTool(id, name, args, options));
      } finally {
        gauge.current -= 1;
      }
    },
  };
}
