/**
 * The live catalog: which manifest tools the running MCP servers actually offer, with compatible
 * schemas. Only tools in the catalog are ever offered to a model; everything else is reported in
 * `missingTools` with a reason.
 */

import { type Clock, GovernanceError, systemClock } from "../../core/index.js";
import type { ToolServerPool } from "../../mcp/index.js";
import type { SourceRegistry } from "../manifests/index.js";
import { buildCatalogSnapshot } from "./build-catalog-snapshot.js";
import type { CatalogSnapshot, CatalogSource, CatalogTool } from "./source-catalog-types.js";

// Re-exported because the broker's modules and createGovernance import the catalog's types from here.

/** Options of `SourceCatalog`. */
export interface SourceCatalogOptions {
  registry: SourceRegistry;
  pool: ToolServerPool;
  /** Source ids the catalog may use; others are `disabled`. @default every source */
  enabledSourceIds?: Iterable<string>;
  /** Server id -> description from the configuration, used in derived manifests. */
  serverDescriptions?: Record<string, string>;
  /** How long one server's `tools/list` may take before it counts as unavailable. @default 30000 */
  listToolsTimeoutMs?: number;
  /** @default systemClock */
  clock?: Clock;
}

/**
 * Matches live MCP tools to manifests and keeps the result current.
 * @example
 * const catalog = new SourceCatalog({ registry, pool });
 * await catalog.start(); // first refresh, then follows tools/list_changed
 * const tool = catalog.requireTool("pubmed", "search");
 */
export class SourceCatalog {
  readonly #registry: SourceRegistry;
  readonly #pool: ToolServerPool;
  readonly #enabled: ReadonlySet<string> | undefined;
  readonly #descriptions: ReadonlyMap<string, string>;
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  readonly #listeners = new Set<(snapshot: CatalogSnapshot) => void>();
  #snapshot: CatalogSnapshot | undefined;
  #running: Promise<CatalogSnapshot> | undefined;
  #queued: Promise<CatalogSnapshot> | undefined;
  #unsubscribe: (() => void) | undefined;

  /** @param options registry, pool and optional enablement, descriptions, timeout and clock */
  constructor(options: SourceCatalogOptions) {
    this.#registry = options.registry;
    this.#pool = options.pool;
    this.#enabled = options.enabledSourceIds === undefined ? undefined : new Set(options.enabledSourceIds);
    // A Map, so a server id such as `toString` never reads an `Object.prototype` member.
    this.#descriptions = new Map(Object.entries(options.serverDescriptions ?? {}));
    this.#timeoutMs = options.listToolsTimeoutMs ?? 30_000;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * Follows the pool's tool-list changes (list_changed, reconnects) and runs a first refresh.
   * @returns the first snapshot
   */
  start(): Promise<CatalogSnapshot> {
    this.#unsubscribe ??= this.#pool.onToolsChanged(() => {
      // A refresh never rejects on server failures (they become statuses), so nothing is lost here.
      void this.refresh().catch(() => undefined);
    });
    return this.refresh();
  }

  /** Stops following tool-list changes. */
  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  /**
   * Re-lists every enabled server and rebuilds the catalog. Calls made while a refresh runs share
   * one follow-up refresh, which starts after the running one so it sees every change.
   * @returns the new snapshot
   */
  refresh(): Promise<CatalogSnapshot> {
    if (this.#queued) return this.#queued;
    if (this.#running) {
      const after = this.#running.catch(() => undefined);
      this.#queued = after.then(() => {
        this.#queued = undefined;
        return this.#run();
      });
      return this.#queued;
    }
    return this.#run();
  }

  /**
   * Listens for revision changes (after a refresh whose revision differs from the previous one).
   * @param event `"change"`
   * @param listener receives the new snapshot
   * @returns a function that removes the listener
   */
  on(event: "change", listener: (snapshot: CatalogSnapshot) => void): () => void {
    if (event !== "change") throw new TypeError(`Unknown catalog event '${String(event)}'.`);
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** The revision of the last snapshot, `undefined` before the first refresh. */
  get revision(): string | undefined {
    return this.#snapshot?.revision;
  }

  /** @returns the last snapshot, `undefined` before the first refresh */
  snapshot(): CatalogSnapshot | undefined {
    return this.#snapshot;
  }

  /** @returns every source (manifest sources first, then derived ones) */
  sources(): CatalogSource[] {
    return this.#snapshot?.sources ?? [];
  }

  /** @returns one source, including a derived one, or `undefined` */
  source(id: string): CatalogSource | undefined {
    return this.#snapshot?.sources.find((source) => source.id === id);
  }

  /** @returns every callable tool */
  tools(): CatalogTool[] {
    return this.#snapshot?.tools ?? [];
  }

  /**
   * @param sourceId a source id
   * @param toolId a tool id
   * @returns the callable tool, or `undefined` when it is missing, unknown or its source is not usable
   */
  getTool(sourceId: string, toolId: string): CatalogTool | undefined {
    return this.#snapshot?.tools.find((tool) => tool.sourceId === sourceId && tool.toolId === toolId);
  }

  /**
   * @param sourceId a source id
   * @param toolId a tool id
   * @returns the callable tool
   * @throws GovernanceError `SOURCE_DISABLED` when the source is disabled; `TOOL_UNAVAILABLE` with the reason otherwise
   */
  requireTool(sourceId: string, toolId: string): CatalogTool {
    const tool = this.getTool(sourceId, toolId);
    if (tool) return tool;
    const source = this.source(sourceId);
    const data = { sourceId, toolId };
    if (!source) {
      const why = this.#snapshot
        ? "is not in the catalog"
        : "cannot be checked: the catalog was never refreshed";
      throw new GovernanceError("TOOL_UNAVAILABLE", `Source '${sourceId}' ${why}.`, { data });
    }
    if (source.status === "disabled") {
      throw new GovernanceError(
        "SOURCE_DISABLED",
        `Source '${sourceId}' is disabled: ${sentence(source.reason)}`,
        {
          data,
        },
      );
    }
    const missing = source.missingTools.find((m) => m.toolId === toolId);
    const reason =
      missing?.reason ?? `the source has no tool '${toolId}' (tools: ${source.availableTools.join(", ")})`;
    throw new GovernanceError(
      "TOOL_UNAVAILABLE",
      `Tool '${sourceId}/${toolId}' is unavailable: ${sentence(reason)}`,
      {
        retryable: source.status === "unavailable",
        data: { ...data, reason },
      },
    );
  }

  #run(): Promise<CatalogSnapshot> {
    const run = this.#build().finally(() => {
      if (this.#running === run) this.#running = undefined;
    });
    this.#running = run;
    return run;
  }

  async #build(): Promise<CatalogSnapshot> {
    const snapshot = await buildCatalogSnapshot({
      registry: this.#registry,
      pool: this.#pool,
      isEnabled: (id) => this.#enabled === undefined || this.#enabled.has(id),
      serverDescriptions: this.#descriptions,
      listToolsTimeoutMs: this.#timeoutMs,
      clock: this.#clock,
    });
    const previous = this.#snapshot?.revision;
    this.#snapshot = snapshot;
    if (snapshot.revision !== previous) this.#emit(snapshot);
    return snapshot;
  }

  #emit(snapshot: CatalogSnapshot): void {
    for (const listener of this.#listeners) {
      try {
        listener(snapshot);
      } catch (error) {
        // Like an EventEmitter: one bad listener neither stops the others nor fails the refresh.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}

/** Ends a reason with exactly one period (pool reasons may already carry one). */
function sentence(text: string | undefined): string {
  return `${(text ?? "").replace(/\.+$/, "")}.`;
}
