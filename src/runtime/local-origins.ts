import type { ExtensionsConfig } from "../config/index.js";
import type { SourceManifest } from "../governance/manifests/index.js";

/**
 * The configured origin a private source may cite over plain HTTP: the LLM Wiki's
 * `SCIENCE_AGENT_LLM_WIKI_URL`, read from the same config entry the bridge gets, so Node-side citation
 * checks and the bridge's requests agree (seeds §5). Public sources keep HTTPS on `networkHosts` only.
 * @param source the source manifest (its data classification and MCP server id)
 * @param config the servers of the runtime
 * @returns the origins the broker lets the source's records cite; empty for a public source
 */
export function localOrigins(source: SourceManifest, config: ExtensionsConfig): string[] {
  if (source.governance.dataClassification === "public") return [];
  const server = config.servers.find((s) => s.id === source.transport.mcpServerId);
  const origin = server?.env.SCIENCE_AGENT_LLM_WIKI_URL;
  return origin ? [origin] : [];
}
