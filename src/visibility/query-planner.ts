/**
 * Which words of a `tool_search` query to score, and in which fields, so that one search stays
 * fast on a catalog of thousands of tools (see `ToolSearchIndexOptions.postingBudget`).
 */
import MiniSearch, { type Query } from "minisearch";
import { normalizeTerm } from "./search-terms.js";
import { SEARCH_FIELDS, type SearchField } from "./tool-search-document.js";

const FIELD_COUNT = SEARCH_FIELDS.length;
/** Field sets to score a word in, richest first: the source blurb and parameter names weigh least. */
const FIELD_TIERS: readonly (readonly SearchField[])[] = [
  SEARCH_FIELDS,
  ["name", "keywords", "description", "kind"],
  ["name", "keywords"],
];
const tokenize = MiniSearch.getDefault("tokenize") as (text: string) => string[];

/**
 * Counts, while MiniSearch indexes, how many tools contain each term in each field (MiniSearch keeps
 * these counts private), and turns a query into MiniSearch sub-queries within a posting budget.
 */
export class QueryPlanner {
  readonly #budget: number;
  /** Term -> per field: number of tools containing it, then the last tool counted. */
  readonly #stats = new Map<string, Int32Array>();

  /** @param budget (tool, field) postings one query may score */
  constructor(budget: number) {
    this.#budget = budget;
  }

  /**
   * Records one occurrence of a normalized term; called for every indexed token, tool by tool.
   * @param term the normalized term
   * @param field the field it occurs in
   * @param tool the tool's position
   */
  count(term: string, field: string, tool: number): void {
    const f = SEARCH_FIELDS.indexOf(field as SearchField);
    if (f < 0) return;
    let stats = this.#stats.get(term);
    if (!stats) {
      stats = new Int32Array(FIELD_COUNT * 2).fill(-1, FIELD_COUNT);
      this.#stats.set(term, stats);
    }
    if (stats[FIELD_COUNT + f] === tool) return;
    stats[FIELD_COUNT + f] = tool;
    stats[f] = (stats[f] ?? 0) + 1;
  }

  /**
   * One sub-query per distinct word, rarest first. A known word matches exactly (plurals are
   * already folded) in the richest field set that fits the budget, or is skipped; the rarest word
   * is always scored in full, so a query never loses its best clue. An unknown word (partial or
   * misspelt) may match as a prefix (4+ letters) or with one typo (5+ letters).
   * @param text the free-text query
   * @returns MiniSearch queries for terms that are already normalized
   */
  plan(text: string): Query[] {
    const terms = new Set<string>();
    for (const token of tokenize(text)) {
      const term = normalizeTerm(token);
      if (term !== null) terms.add(term);
    }
    const known: { term: string; stats: Int32Array }[] = [];
    const plan: Query[] = [];
    for (const term of terms) {
      const stats = this.#stats.get(term);
      if (stats) known.push({ term, stats });
      else plan.push({ queries: [term], prefix: term.length >= 4, fuzzy: term.length >= 5 ? 1 : false });
    }
    known.sort((a, b) => cost(a.stats, SEARCH_FIELDS) - cost(b.stats, SEARCH_FIELDS));
    let spent = 0;
    for (const { term, stats } of known) {
      const fit = FIELD_TIERS.find((tier) => spent === 0 || spent + cost(stats, tier) <= this.#budget);
      if (!fit) continue;
      spent += cost(stats, fit);
      plan.push({ queries: [term], prefix: false, fuzzy: false, fields: [...fit] });
    }
    return plan;
  }
}

function cost(stats: Int32Array, fields: readonly SearchField[]): number {
  let sum = 0;
  for (const field of fields) sum += stats[SEARCH_FIELDS.indexOf(field)] ?? 0;
  return sum;
}
