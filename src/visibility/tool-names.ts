import { GovernanceError, sha256Hex } from "../core/index.js";

/** Longest tool name that chat-model APIs accept. */
export const MAX_TOOL_NAME_LENGTH = 64;

const HASH_SUFFIX_LENGTH = 8;

function sanitize(part: string): string {
  return part.replace(/[^A-Za-z0-9_-]/g, "_");
}

/**
 * The model-visible name of a governed tool: `mcp__<sourceId>__<toolId>`. Characters outside
 * `[A-Za-z0-9_-]` become `_`; a name longer than 64 characters is cut and given a stable hash
 * suffix of the unshortened name, so the same tool always gets the same name.
 * @param sourceId the source manifest id
 * @param toolId the tool manifest id
 * @returns a name of at most 64 characters
 * @example modelVisibleName("pubmed", "search") // "mcp__pubmed__search"
 */
export function modelVisibleName(sourceId: string, toolId: string): string {
  const full = `mcp__${sanitize(sourceId)}__${sanitize(toolId)}`;
  if (full.length <= MAX_TOOL_NAME_LENGTH) return full;
  const suffix = sha256Hex(`${sourceId}\u0000${toolId}`).slice(0, HASH_SUFFIX_LENGTH);
  return `${full.slice(0, MAX_TOOL_NAME_LENGTH - HASH_SUFFIX_LENGTH - 1)}_${suffix}`;
}

/** A tool identity to be named. */
export interface NamedToolRef {
  sourceId: string;
  toolId: string;
}

/**
 * Names every tool and fails when two different tools would get the same model-visible name
 * (for example `a.b` and `a_b` both sanitize to `a_b`).
 * @param tools the tools to name
 * @returns a map from model-visible name to the tool
 * @throws GovernanceError `DUPLICATE_ID` naming both tools when names collide
 */
export function buildToolNameTable<T extends NamedToolRef>(tools: Iterable<T>): Map<string, T> {
  const table = new Map<string, T>();
  for (const tool of tools) {
    const name = modelVisibleName(tool.sourceId, tool.toolId);
    const existing = table.get(name);
    if (existing && (existing.sourceId !== tool.sourceId || existing.toolId !== tool.toolId)) {
      throw new GovernanceError(
        "DUPLICATE_ID",
        `Tools ${existing.sourceId}/${existing.toolId} and ${tool.sourceId}/${tool.toolId} both map to the model-visible name '${name}'. Rename one source or tool id so they differ in [A-Za-z0-9_-].`,
        { data: { name } },
      );
    }
    table.set(name, tool);
  }
  return table;
}
