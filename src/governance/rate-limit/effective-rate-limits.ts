/**
 * The rate limits a runtime enforces: the manifests' groups, raised where a provider key allows more,
 * then the app's own overrides (which win).
 */
import type { RateLimitGroupConfig } from "./rate-limit-config.js";

/** NCBI E-utilities allow 10 requests/s with an API key (3 without). */
export const NCBI_KEYED_REQUESTS_PER_SECOND = 10;
const NCBI_GROUP = "ncbi-eutils";

/**
 * Resolves the limits per group.
 * @param manifestGroups the registry's groups (`registry.rateLimitGroups()`)
 * @param options the environment (`NCBI_API_KEY` raises `ncbi-eutils` to 10/s) and the app's overrides
 *   per group (fields given replace the manifest's; `undefined` keeps it)
 * @returns group name -> limits, a new map
 * @example
 * effectiveRateLimits(registry.rateLimitGroups(), { env: process.env, overrides: { "ebi-www": { rateLimitPerSecond: 2 } } });
 */
export function effectiveRateLimits(
  manifestGroups: ReadonlyMap<string, RateLimitGroupConfig>,
  options: {
    env?: Record<string, string | undefined>;
    overrides?: Record<string, RateLimitGroupConfig>;
  } = {},
): Map<string, RateLimitGroupConfig> {
  const groups = new Map([...manifestGroups].map(([name, config]) => [name, { ...config }]));
  const ncbi = groups.get(NCBI_GROUP);
  if (ncbi && options.env?.NCBI_API_KEY?.trim()) {
    // Only a raise: a stricter manifest value (an operator's choice) stays.
    const rate = ncbi.rateLimitPerSecond;
    if (rate !== undefined && rate < NCBI_KEYED_REQUESTS_PER_SECOND) {
      ncbi.rateLimitPerSecond = NCBI_KEYED_REQUESTS_PER_SECOND;
    }
  }
  for (const [name, override] of Object.entries(options.overrides ?? {})) {
    const merged: RateLimitGroupConfig = { ...groups.get(name) };
    for (const [field, value] of Object.entries(override) as [
      keyof RateLimitGroupConfig,
      number | undefined,
    ][]) {
      if (value !== undefined) merged[field] = value;
    }
    groups.set(name, merged);
  }
  return groups;
}
