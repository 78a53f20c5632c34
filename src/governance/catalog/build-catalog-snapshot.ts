/**
 * One catalog refresh: lists the servers that enabled sources need, gives unmanaged servers a derived
 * manifest, matches every enabled source to its server's live tools and hashes the result into a revision.
 */

import type { Clock } from "../../core/index.js";
import { hashCanonical } from "../../core/index.js";
import type { ToolServerPool } from "../../mcp/index.js";
import type { SourceRegistry } from "../manifests/index.js";
import { derivedSourceId, deriveManifest } from "../manifests/index.js";
import { listServerTools, type ToolListing } from "./list-server-tools.js";
import { matchTools } from "./match-tools.js";
import type { CatalogSnapshot, CatalogSource, CatalogTool } from "./source-catalog-types.js";

/** Options of `buildCatalogSnapshot` (the `SourceCatalog`'s resolved options). */
export interface BuildCatalogSnapshotOptions {
  registry: SourceRegistry;
  pool: ToolServerPool;
  /** Whether a source id (manifest or derived) may be used; other sources are `disabled`. */
  isEnabled: (sourceId: string) => boolean;
  /** Server id -> description from the configuration, used in derived manifests. */
  serverDescriptions: ReadonlyMap<string, string>;
  /** How long one server's `tools/list` may take before it counts as unavailable. */
  listToolsTimeoutMs: number;
  clock: Clock;
}

/**
 * Builds a catalog snapshot from the registry's manifests and the pool's live servers. Server
 * failures become source statuses, never rejections.
 * @param options registry, pool, enablement, descriptions, timeout and clock
 * @returns the snapshot, with manifest sources first, then derived ones
 */
export async function buildCatalogSnapshot(options: BuildCatalogSnapshotOptions): Promise<CatalogSnapshot> {
  const { registry, pool, isEnabled } = options;
  const configured = new Set(pool.serverIds());
  const isServerOn = (id: string) => configured.has(id) && pool.state(id).status !== "disabled";
  const manifests = registry.list();
  const managed = new Set(manifests.map((m) => m.transport.mcpServerId));
  const unmanaged = [...configured].filter((id) => !managed.has(id));

  // Only servers that something enabled needs are listed, so a switched-off source spawns nothing.
  const wanted = new Set<string>();
  for (const m of manifests) if (isEnabled(m.id)) wanted.add(m.transport.mcpServerId);
  for (const id of unmanaged) if (isEnabled(derivedSourceId(id))) wanted.add(id);
  const listed = [...wanted].filter(isServerOn);
  const listOptions = { clock: options.clock, timeoutMs: options.listToolsTimeoutMs };
  const listings = new Map(
    await Promise.all(listed.map(async (id) => [id, await listServerTools(pool, id, listOptions)] as const)),
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
      manifest: deriveManifest(serverId, live, options.serverDescriptions.get(serverId)),
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
      const reason = pool.state(serverId).reason ?? `server '${serverId}' is disabled in the configuration`;
      sources.push({ ...base, status: "disabled", reason });
    } else {
      const absent: ToolListing = { ok: false, reason: `no MCP server '${serverId}' is configured` };
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
  const unavailableServers = [...listings].flatMap(([serverId, listing]) =>
    listing.ok ? [] : [{ serverId, reason: listing.reason }],
  );
  return { revision, sources, tools, warnings, unavailableServers };
}
