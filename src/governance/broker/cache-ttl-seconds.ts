import type { SourceManifest, ToolManifest } from "../manifests/index.js";

/**
 * How long the broker may cache a tool's results: only read-only tools of public sources, and only
 * when neither the source nor the tool turns caching off.
 * @param source the source manifest (its `cache` settings and data classification)
 * @param tool the tool manifest (`readOnly` and its `cachePolicy`)
 * @returns the time to live in seconds; 0 means do not cache
 */
export function cacheTtlSeconds(source: SourceManifest, tool: ToolManifest): number {
  if (!tool.readOnly || source.governance.dataClassification !== "public") return 0;
  if (!source.cache.enabled || tool.cachePolicy?.enabled === false) return 0;
  return tool.cachePolicy?.ttlSeconds ?? source.cache.ttlSeconds;
}
