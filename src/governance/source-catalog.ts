/**
 * The live catalog: which manifest tools the running MCP servers actually offer, with compatible
 * schemas. Only tools in the catalog are ever offered to a model; everything else is reported in
 * `missingTools` with a reason.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ToolServerPool } from "../mcp/types.js";
import { hashCanonical } from "./canonical-json.js";
import { type Clock, systemClock } from "./clock.js";
import { derivedSourceId, deriveManifest } from "./derived-manifest.js";
import { GovernanceError } from "./errors.js";
import type { SourceManifest, ToolManifest } from "./manifest-schema.js";
import { inputSchemasCompatible } from "./schema-compat.js";
import type { SourceRegistry } from "./source-registry.js";
import { toolDefinitionHash } from "./tool-definition-hash.js";

/** Availability of a source. */
export type SourceStatus = "ready" | "degraded" | "unavailable" | "disabled";

/** A manifest tool that is not offered, and why. */
export interface MissingTool {
  toolId: string;
  mcpToolName: string;
  reason: string;
}

/** One source in the catalog. */
export interface CatalogSource {
  id: string;
  serverId: string;
  status: SourceStatus;
  /** Why the source is not `ready`. */
  reason?: string;
  /** True for a server without a manifest, governed by a derived default manifest. */
  derived: boolean;
  manifest: SourceManifest;
  /** Tool ids that can be called, in manifest order. */
  availableTools: string[];
  /** Tools that are hidden: absent from the server, incompatible, or the server is unavailable. */
  missingTools: MissingTool[];
}

/** One callable tool: its manifest and the live MCP definition it was matched to. */
export interface CatalogTool {
  sourceId: string;
  toolId: string;
  serverId: string;
  manifest: ToolManifest;
  liveTool: Tool;
  /** `toolDefinitionHash(liveTool)`: changes whenever the server changes the tool's contract. */
  definitionHash: string;
}

/** The result of one refresh. */
export interface CatalogSnapshot {
  /** Hash of every source's status, available and missing tool ids, and every tool's definition hash. */
  revision: string;
  sources: CatalogSource[];
  tools: CatalogTool[];
  /** Servers that could not be given a derived manifest (id clash), and similar notes. */
  warnings: string[];
}

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

type Listing = { ok: true; tools: Tool[] } | { ok: false; reason: string };

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
  readonly #descriptions: Record<string, string>;
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
    this.#descriptions = options.serverDescriptions ?? {};
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
    const configured = new Set(this.#pool.serverIds());
    const isEnabled = (id: string) => this.#enabled === undefined || this.#enabled.has(id);
    const isServerOn = (id: string) => configured.has(id) && this.#pool.state(id).status !== "disabled";
    const manifests = this.#registry.list();
    const managed = new Set(manifests.map((m) => m.transport.mcpServerId));
    const unmanaged = [...configured].filter((id) => !managed.has(id));

    // Only servers that something enabled needs are listed, so a switched-off source spawns nothing.
    const wanted = new Set<string>();
    for (const m of manifests) if (isEnabled(m.id)) wanted.add(m.transport.mcpServerId);
    for (const id of unmanaged) if (isEnabled(derivedSourceId(id))) wanted.add(id);
    const listed = [...wanted].filter(isServerOn);
    const listings = new Map(
      await Promise.all(listed.map(async (id) => [id, await this.#list(id)] as const)),
    );

    const warnings: string[] = [];
    const candidates = manifests.map((manifest) => ({ manifest, derived: false }));
    const taken = new Set(manifests.map((m) => m.id));
    for (const serverId of unmanaged) {
      const id = derivedSourceId(serverId);
      if (taken.has(id)) {
        warnings.push(
          `Server '${serverId}' has no manifest and its derived id '${id}' is taken; its tools are hidden.`,
        );
        continue;
      }
      taken.add(id);
      const listing = listings.get(serverId);
      const live = listing?.ok ? listing.tools : [];
      candidates.push({
        manifest: deriveManifest(serverId, live, this.#descriptions[serverId]),
        derived: true,
      });
    }

    const sources: CatalogSource[] = [];
    const tools: CatalogTool[] = [];
    for (const { manifest, derived } of candidates) {
      const serverId = manifest.transport.mcpServerId;
      const base = { id: manifest.id, serverId, derived, manifest, availableTools: [], missingTools: [] };
      if (!isEnabled(manifest.id)) {
        sources.push({ ...base, status: "disabled", reason: `source '${manifest.id}' is not enabled` });
      } else if (configured.has(serverId) && !isServerOn(serverId)) {
        const reason =
          this.#pool.state(serverId).reason ?? `server '${serverId}' is disabled in the configuration`;
        sources.push({ ...base, status: "disabled", reason });
      } else {
        const absent: Listing = { ok: false, reason: `no MCP server '${serverId}' is configured` };
        const matched = matchTools(manifest, listings.get(serverId) ?? absent);
        sources.push({ ...base, ...matched.source });
        tools.push(...matched.tools);
      }
    }

    // Reasons stay out of the revision: a server's changing stderr is not a catalog change.
    const revision = hashCanonical({
      sources: sources.map((s) => [s.id, s.status, s.availableTools, s.missingTools.map((m) => m.toolId)]),
      tools: tools.map((t) => [t.sourceId, t.toolId, t.definitionHash]),
    });
    const previous = this.#snapshot?.revision;
    this.#snapshot = { revision, sources, tools, warnings };
    if (revision !== previous) this.#emit(this.#snapshot);
    return this.#snapshot;
  }

  async #list(serverId: string): Promise<Listing> {
    const timeout = new AbortController();
    try {
      const timedOut = this.#clock.sleep(this.#timeoutMs, timeout.signal).then(() => {
        throw new Error(`no answer within ${this.#timeoutMs} ms`);
      });
      return { ok: true, tools: await Promise.race([this.#pool.listTools(serverId), timedOut]) };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const tail = this.#pool.state(serverId).stderrTail ?? [];
      const stderr = tail.length > 0 ? ` (stderr: ${tail.slice(-5).join(" | ")})` : "";
      return { ok: false, reason: `tools/list on server '${serverId}' failed: ${message}${stderr}` };
    } finally {
      timeout.abort();
    }
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

type SourceOutcome = Pick<CatalogSource, "status" | "reason" | "availableTools" | "missingTools">;

/** Matches a source's manifest tools to the live tools of its server, by `mcpToolName`. */
function matchTools(
  manifest: SourceManifest,
  listing: Listing,
): { source: SourceOutcome; tools: CatalogTool[] } {
  const serverId = manifest.transport.mcpServerId;
  const tools: CatalogTool[] = [];
  const missingTools: MissingTool[] = [];
  const live = new Map<string, Tool>();
  if (listing.ok) for (const tool of listing.tools) if (!live.has(tool.name)) live.set(tool.name, tool);
  for (const tool of manifest.tools) {
    const liveTool = live.get(tool.mcpToolName);
    const compat = liveTool && inputSchemasCompatible(tool.inputSchema, liveTool.inputSchema);
    const miss = (reason: string) =>
      missingTools.push({ toolId: tool.id, mcpToolName: tool.mcpToolName, reason });
    if (!listing.ok) miss(listing.reason);
    else if (!liveTool || !compat) miss(`server '${serverId}' has no tool '${tool.mcpToolName}'`);
    else if (!compat.compatible)
      miss(`input schema incompatible with the live tool: ${compat.reasons.join("; ")}`);
    else {
      const definitionHash = toolDefinitionHash(liveTool);
      tools.push({
        sourceId: manifest.id,
        toolId: tool.id,
        serverId,
        manifest: tool,
        liveTool,
        definitionHash,
      });
    }
  }
  const availableTools = tools.map((t) => t.toolId);
  const outcome = { availableTools, missingTools };
  if (!listing.ok) return { source: { status: "unavailable", reason: listing.reason, ...outcome }, tools };
  if (missingTools.length === 0) return { source: { status: "ready", ...outcome }, tools };
  const total = manifest.tools.length;
  if (tools.length === 0) {
    // Nothing of the source can be called, which "degraded" would understate.
    return {
      source: { status: "unavailable", reason: `none of its ${total} tools is available`, ...outcome },
      tools,
    };
  }
  const names = missingTools.map((m) => m.toolId).join(", ");
  const reason = `${missingTools.length} of ${total} tools unavailable: ${names}`;
  return { source: { status: "degraded", reason, ...outcome }, tools };
}
