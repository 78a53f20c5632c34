/**
 * The `<available-deferred-tools>` section within a token budget. The richest rendering that fits
 * wins: every hidden tool with its one-line summary, else every name alone, else one line per
 * source (its tool count and what it covers), shortened and finally cut, leaving `tool_search` to
 * find the rest. The section is a pure function of the tools, the promotion state and the options,
 * so a catalog that does not change yields the same bytes turn after turn (prompt caches keep it).
 */
import { GovernanceError } from "../core/index.js";
import { neutralizePromptTags } from "../governance/envelope/index.js";
import { estimateTokens } from "./estimate-tokens.js";
import type { SurfaceTool } from "./surface-tool.js";

/** Default token budget of the section: the built-in catalog keeps its summaries; 10,000 tools fit. */
export const DEFAULT_DEFERRED_TOOLS_TOKEN_BUDGET = 2_500;

/** Options of the `<available-deferred-tools>` section. */
export interface DeferredToolsSectionOptions {
  /**
   * Most tokens the section may take (tags and instructions included; `tool_search` and promoted
   * tools' schemas are bound apart and not counted). Past it, tools are listed by name only; past
   * that, one line per source; past that, source lines are shortened, then the smallest sources are
   * summed up in one line (a budget too small even for that still gets the instructions and that line).
   * `Infinity` lists every summary.
   * @default 2500
   */
  tokenBudget?: number | undefined;
  /**
   * Counts the tokens of a text (e.g. the model's own tokenizer).
   * @default `estimateTokens`, a tokenizer-free estimate that over-counts o200k on real tool text
   */
  countTokens?: ((text: string) => number) | undefined;
}

/** Which rendering a section uses. */
export type DeferredToolsTier = "summaries" | "names" | "sources";

/** A rendered section. */
export interface DeferredToolsSection {
  /** The section, `""` when no tool is hidden. */
  text: string;
  /** The rendering chosen; `undefined` when the section is empty. */
  tier: DeferredToolsTier | undefined;
}

/** Section options with their defaults applied. */
export interface ResolvedDeferredToolsSectionOptions {
  tokenBudget: number;
  countTokens: (text: string) => number;
}

const OPEN = "<available-deferred-tools>";
const CLOSE = "</available-deferred-tools>";
const LOAD_HINT =
  "These tools exist, but their schemas are not loaded. Load one with tool_search (select:<name>, or keywords) before calling it.";
const NAMES_HINT = `${LOAD_HINT} The list is long, so it gives names only: tool_search returns each tool's description.`;
const SOURCES_HINT =
  "Too many tools to list: these are their sources, with how many tools each has and what they cover. " +
  "Tool names read mcp__<source>__<tool>. Load a tool with tool_search before calling it: query a source and a task " +
  '(e.g. "<source> search papers"), or select:<name> for an exact name.';
/** Longest "what it covers" of a source line, then the shorter one tried when lines do not fit. */
const COVERS_LENGTHS = [120, 60, 0] as const;

/**
 * Checks and completes the section options.
 * @param options the app's options
 * @returns the budget and the token counter to use
 * @throws GovernanceError `INVALID_CONFIG` when `tokenBudget` is not a positive number
 */
export function resolveDeferredToolsSectionOptions(
  options: DeferredToolsSectionOptions = {},
): ResolvedDeferredToolsSectionOptions {
  const tokenBudget = options.tokenBudget ?? DEFAULT_DEFERRED_TOOLS_TOKEN_BUDGET;
  if (typeof tokenBudget !== "number" || Number.isNaN(tokenBudget) || tokenBudget <= 0) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `deferredTools.tokenBudget must be a positive number of tokens (got ${String(tokenBudget)}); ` +
        `omit it for the default ${DEFAULT_DEFERRED_TOOLS_TOKEN_BUDGET}.`,
    );
  }
  return { tokenBudget, countTokens: options.countTokens ?? estimateTokens };
}

/**
 * Renders the section for the given hidden tools within the budget.
 * @param hidden the deferred tools the model has not loaded, in catalog order
 * @param options budget and token counter
 * @returns the text and the rendering used
 * @throws GovernanceError `INVALID_CONFIG` for a bad budget
 */
export function renderDeferredToolsSection(
  hidden: readonly SurfaceTool[],
  options: DeferredToolsSectionOptions = {},
): DeferredToolsSection {
  if (hidden.length === 0) return { text: "", tier: undefined };
  const resolved = resolveDeferredToolsSectionOptions(options);
  // Summaries of servers without a manifest are the server's own words: untrusted text.
  const summaries = fitSection(
    LOAD_HINT,
    hidden,
    (tool) => `${safe(tool.name)}: ${safe(tool.summary)}`,
    resolved,
  );
  if (summaries) return { text: summaries, tier: "summaries" };
  const names = fitSection(NAMES_HINT, hidden, (tool) => safe(tool.name), resolved);
  if (names) return { text: names, tier: "names" };
  return { text: sourcesSection(hidden, resolved), tier: "sources" };
}

interface SourceGroup {
  id: string;
  tools: SurfaceTool[];
}

function sourcesSection(
  hidden: readonly SurfaceTool[],
  options: ResolvedDeferredToolsSectionOptions,
): string {
  const groups = new Map<string, SourceGroup>();
  for (const tool of hidden) {
    const group = groups.get(tool.sourceId) ?? { id: tool.sourceId, tools: [] };
    group.tools.push(tool);
    groups.set(tool.sourceId, group);
  }
  const sorted = [...groups.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const length of COVERS_LENGTHS) {
    const text = fitSection(SOURCES_HINT, sorted, (group) => sourceLine(group, length), options);
    if (text) return text;
  }
  return cutSources(sorted, options);
}

/** Source lines, largest sources first, as many as fit; the rest summed up in one line. */
function cutSources(groups: readonly SourceGroup[], options: ResolvedDeferredToolsSectionOptions): string {
  const bySize = [...groups].sort((a, b) => b.tools.length - a.tools.length || (a.id < b.id ? -1 : 1));
  const rest = (from: number) => {
    const left = bySize.slice(from);
    const tools = left.reduce((sum, group) => sum + group.tools.length, 0);
    return `- ${left.length} more sources with ${tools} tools: find them with tool_search.`;
  };
  const fixed = options.countTokens([OPEN, SOURCES_HINT, rest(0), CLOSE].join("\n")) + 1;
  const lines: string[] = [];
  let spent = fixed;
  for (const group of bySize) {
    const line = sourceLine(group, 0);
    const cost = options.countTokens(line) + 1;
    if (spent + cost > options.tokenBudget) break;
    lines.push(line);
    spent += cost;
  }
  return [OPEN, SOURCES_HINT, ...lines, rest(lines.length), CLOSE].join("\n");
}

/** `- pubmed: 3 tools. PubMed: biomedical literature…`, the blurb cut to `length` characters. */
function sourceLine(group: SourceGroup, length: number): string {
  const count = `${group.tools.length} tool${group.tools.length === 1 ? "" : "s"}`;
  const head = `- ${safe(group.id)}: ${count}`;
  if (length === 0) return `${head}.`;
  return `${head}. ${safe(cut(covers(group), length))}`;
}

/** What a source covers: its summary, else the ids of its first tools. */
function covers(group: SourceGroup): string {
  const summary = group.tools[0]?.sourceSummary;
  if (summary !== undefined && summary.trim() !== "") return summary;
  return group.tools
    .slice(0, 12)
    .map((tool) => tool.toolId)
    .join(", ");
}

/**
 * The section with one line per item, or `undefined` when it would exceed the budget. Lines are
 * rendered and counted one by one (plus one token for the newline) and stop at the budget, so a
 * huge catalog costs no more to reject than a small one.
 */
function fitSection<T>(
  hint: string,
  items: readonly T[],
  render: (item: T) => string,
  options: ResolvedDeferredToolsSectionOptions,
): string | undefined {
  let spent = options.countTokens([OPEN, hint, CLOSE].join("\n")) + 1;
  const lines: string[] = [];
  for (const item of items) {
    const line = render(item);
    spent += options.countTokens(line) + 1;
    if (spent > options.tokenBudget) return undefined;
    lines.push(line);
  }
  return [OPEN, hint, ...lines, CLOSE].join("\n");
}

/** One line of third-party text that cannot open or close a prompt section. */
function safe(text: string): string {
  return neutralizePromptTags(text.replace(/\s+/g, " ").trim());
}

/** At most `length` characters, cut at a word boundary with an ellipsis. */
function cut(text: string, length: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= length) return flat;
  const head = flat.slice(0, length - 1);
  const space = head.lastIndexOf(" ");
  return `${(space > length / 2 ? head.slice(0, space) : head).replace(/[\s,;:.]+$/, "")}…`;
}
