/**
 * The synthetic `tool_search` tool. It returns the matches' names, descriptions and
 * schemas as JSON text for the model, and the promotion to apply as the tool message's artifact, so
 * the graph node that ran it can write the promotion channel.
 */
import { type StructuredToolInterface, tool } from "@langchain/core/tools";
import { z } from "zod";
import { neutralizePromptTags } from "../governance/envelope/index.js";
import { type PromotionUpdate, promote } from "./promotion.js";
import type { SurfaceTool } from "./surface-tool.js";
import { toolSearchIndexFor } from "./tool-search.js";
import { MAX_RESULTS_LIMIT, parseToolSearchQuery } from "./tool-search-query.js";

/** The model-visible name of the search tool. */
export const TOOL_SEARCH_NAME = "tool_search";

/** Kept short: this text is part of every first-turn request. */
const DESCRIPTION =
  "Load the deferred tools of <available-deferred-tools> so you can call them: returns each match's description and input schema. " +
  'query: "select:name1,name2" for exact names, "+word other words" to require a word, or keywords. ' +
  "max_results: 1-20 (default 5).";

/** Options of `createToolSearchTool`. */
export interface ToolSearchToolOptions {
  /** The session's current tools, read on every call (e.g. `() => surface.tools(threadId)`). */
  getTools: () => readonly SurfaceTool[];
  /**
   * The session's sources that are down now (`surface.unavailableSources(threadId)`): named in the
   * hint when nothing matched, so the model can tell the user instead of searching on. @default none
   */
  getUnavailableSources?: (() => readonly string[]) | undefined;
}

/** One entry of the tool's JSON result. */
export interface ToolSearchResultEntry {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  matchedIn: string[];
}

/** The JSON text the tool returns. */
export interface ToolSearchResult {
  results: ToolSearchResultEntry[];
  /** `select:` names that match no tool. */
  notFound?: string[];
  /** Advice when nothing matched. */
  hint?: string;
}

/**
 * Creates `tool_search` as a LangChain tool with response format `content_and_artifact`: invoked
 * with a tool call it yields a `ToolMessage` whose `content` is the JSON text and whose `artifact` is
 * the `PromotionUpdate` of the results; invoked with plain arguments it returns the JSON text.
 * @param options where the session's tools come from
 * @returns the tool, named exactly `tool_search`
 * @example
 * const search = createToolSearchTool({ getTools: () => surface.tools(threadId) });
 * const message = await search.invoke({ type: "tool_call", id: "1", name: "tool_search", args: { query: "select:mcp__pubmed__search" } });
 * const update = promotionFromToolSearchResult(message); // {promote: {mcp__pubmed__search: "<hash>"}}
 */
export function createToolSearchTool(options: ToolSearchToolOptions): StructuredToolInterface {
  return tool(
    async ({ query, max_results }): Promise<[string, PromotionUpdate]> => {
      const tools = options.getTools();
      const index = toolSearchIndexFor(tools);
      const hits = index.search(query, max_results);
      const byName = new Map(tools.map((t) => [t.name, t]));
      const results: ToolSearchResultEntry[] = hits.flatMap((hit) => {
        const found = byName.get(hit.name);
        return found
          ? [
              {
                name: found.name,
                description: found.description,
                inputSchema: found.inputSchema,
                matchedIn: hit.matchedIn,
              },
            ]
          : [];
      });
      const body: ToolSearchResult = { results };
      const parsed = parseToolSearchQuery(query);
      if (parsed.kind === "select") {
        const notFound = parsed.names.filter((ref) => index.resolve(ref).length === 0);
        // The query's own names, echoed: inert, like every other text the model reads.
        if (notFound.length > 0) body.notFound = notFound.map(neutralizePromptTags);
      }
      if (results.length === 0) {
        const down = options.getUnavailableSources?.() ?? [];
        body.hint =
          "No tool matched. Try other keywords (a data type, a database name or an identifier kind), or pick a name from <available-deferred-tools>." +
          (down.length > 0
            ? ` These sources are unavailable right now, so their tools cannot be found: ${down.join(", ")}.`
            : "");
      }
      return [
        JSON.stringify(body),
        promote(
          results.map((r) => r.name),
          tools,
        ),
      ];
    },
    {
      name: TOOL_SEARCH_NAME,
      description: DESCRIPTION,
      schema: z.object({
        query: z.string().describe("select:<names>, +required words, or keywords"),
        max_results: z.number().int().min(1).max(MAX_RESULTS_LIMIT).optional(),
      }),
      responseFormat: "content_and_artifact",
    },
  );
}

/** A `ToolMessage` (or anything with its `content` and `artifact`). */
export interface ToolSearchMessageLike {
  content: unknown;
  artifact?: unknown;
}

/**
 * The promotion a `tool_search` result calls for.
 * - From the `ToolMessage`: its artifact (the definition hashes the model was shown).
 * - From the JSON text alone: the result names, promoted at the hashes of `tools` now.
 * @param result the tool message, or its JSON text
 * @param tools the session's tools (required for text, used for a message without artifact)
 * @returns the update for the promotion channel (empty when the text is not a `tool_search` result)
 * @example
 * const update = promotionFromToolSearchResult(toolMessage); // then write {promotion: update}
 */
export function promotionFromToolSearchResult(
  result: ToolSearchMessageLike,
  tools?: readonly SurfaceTool[],
): PromotionUpdate;
export function promotionFromToolSearchResult(
  result: ToolSearchMessageLike | string,
  tools: readonly SurfaceTool[],
): PromotionUpdate;
export function promotionFromToolSearchResult(
  result: ToolSearchMessageLike | string,
  tools?: readonly SurfaceTool[],
): PromotionUpdate {
  if (typeof result !== "string" && isPromotionUpdate(result.artifact)) return result.artifact;
  const text = typeof result === "string" ? result : typeof result.content === "string" ? result.content : "";
  const names = resultNames(text);
  return promote(names, tools ?? []);
}

function resultNames(text: string): string[] {
  try {
    const parsed = JSON.parse(text) as { results?: unknown };
    if (!Array.isArray(parsed.results)) return [];
    return parsed.results.flatMap((entry: unknown) => {
      const name = (entry as { name?: unknown } | null)?.name;
      return typeof name === "string" ? [name] : [];
    });
  } catch {
    // Error text (e.g. a schema rejection) promotes nothing.
    return [];
  }
}

function isPromotionUpdate(value: unknown): value is PromotionUpdate {
  if (typeof value !== "object" || value === null) return false;
  const promoteField = (value as { promote?: unknown }).promote;
  return (
    typeof promoteField === "object" &&
    promoteField !== null &&
    Object.values(promoteField).every((hash) => typeof hash === "string")
  );
}
