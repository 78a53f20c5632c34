/** What `tool_search` indexes of each tool: the fields, their weights and the text of each. */
import type { SurfaceTool } from "./surface-tool.js";

/** The indexed text of one tool, by field; `id` is the tool's position in the index's list. */
export interface ToolSearchDocument {
  id: number;
  name: string;
  keywords: string;
  description: string;
  source: string;
  parameters: string;
  kind: string;
}

/** The indexed fields, also the `matchedIn` labels, in the order they are reported. */
export const SEARCH_FIELDS = ["name", "keywords", "description", "source", "parameters", "kind"] as const;

/** One indexed field. */
export type SearchField = (typeof SEARCH_FIELDS)[number];

/**
 * Field weights, tuned on the labelled queries of `test/visibility/retrieval-queries.ts` and checked
 * on a second batch written afterwards. Words of a tool's own name and routing keywords weigh most;
 * the source blurb, shared by all of a source's tools, least (it cannot tell them apart).
 */
export const SEARCH_BOOST: Record<SearchField, number> = {
  name: 2,
  keywords: 2.5,
  description: 1,
  source: 0.3,
  parameters: 0.3,
  kind: 1.5,
};

/**
 * Everyday words for a tool's kind and its source's kind (both closed enums of the manifest
 * schema), so that "find papers" reaches a literature search tool whose text says "articles".
 */
const TOOL_KIND_WORDS: Record<string, string> = {
  search: "search find",
  lookup: "lookup look up fetch get details",
  analysis: "analysis analyse analyze predict",
  "artifact-plan": "download file",
};
const SOURCE_KIND_WORDS: Record<string, string> = {
  literature: "literature paper article publication",
  protein: "protein",
  structure: "structure 3d",
  genomics: "genome genomic gene",
  variation: "variant variation mutation",
  pathway: "pathway",
  chemistry: "chemistry chemical compound molecule drug",
  dataset: "dataset data",
  "knowledge-base": "knowledge base wiki note",
};

/**
 * The indexed text of a tool.
 * @param tool the tool
 * @param id its position in the index's list
 * @returns one string per field
 */
export function toSearchDocument(tool: SurfaceTool, id: number): ToolSearchDocument {
  const properties = (tool.inputSchema as { properties?: unknown }).properties;
  const parameters = properties && typeof properties === "object" ? Object.keys(properties) : [];
  return {
    id,
    // Source and tool ids, without the "mcp" that every name shares.
    name: `${tool.sourceId} ${tool.toolId}`,
    // Routing keywords are the words a manifest author expects in requests for the tool.
    keywords: tool.routing.keywords.join(" "),
    description: tool.toolDescription ?? tool.description,
    source: tool.sourceSummary ?? tool.sourceId,
    parameters: parameters.join(" "),
    kind: [ownValue(TOOL_KIND_WORDS, tool.kind), ownValue(SOURCE_KIND_WORDS, tool.sourceKind)]
      .filter(Boolean)
      .join(" "),
  };
}

/**
 * The fields a MiniSearch result matched in, in `SEARCH_FIELDS` order.
 * @param match MiniSearch's `match` (query term -> fields)
 * @returns field names
 */
export function matchedFields(match: Record<string, readonly string[]>): string[] {
  const fields = new Set<string>();
  for (const list of Object.values(match)) for (const field of list) fields.add(field);
  return SEARCH_FIELDS.filter((field) => fields.has(field));
}

function ownValue(table: Record<string, string>, key: string | undefined): string | undefined {
  return key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}
