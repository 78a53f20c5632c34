/**
 * Ranking for `tool_search`: `select:` by exact name, `+term` filters, otherwise
 * MiniSearch BM25 over name parts, routing keywords, description, source summary and parameter
 * names, with exact and suffix name matches first.
 */
import { LRUCache } from "lru-cache";
import MiniSearch, { type SearchResult } from "minisearch";
import { NameIndex } from "./name-index.js";
import { QueryPlanner } from "./query-planner.js";
import { normalizeTerm } from "./search-terms.js";
import type { SurfaceTool } from "./surface-tool.js";
import {
  matchedFields,
  SEARCH_BOOST,
  SEARCH_FIELDS,
  type ToolSearchDocument,
  toSearchDocument,
} from "./tool-search-document.js";
import {
  clampMaxResults,
  DEFAULT_MAX_RESULTS,
  MAX_RESULTS_LIMIT,
  parseToolSearchQuery,
} from "./tool-search-query.js";

/** One ranked tool. */
export interface ToolSearchHit {
  /** Model-visible name. */
  name: string;
  /** Higher is better: 2000+ an exact name, 1000+ a name suffix, else the BM25 score. */
  score: number;
  /** Why it matched: `select`, `name`, `name-suffix`, `keywords`, `description`, `source`, `parameters`, `kind`. */
  matchedIn: string[];
}

const EXACT_TIER = 2;
const SUFFIX_TIER = 1;
const TIER_SCORE = 1000;
/** @see ToolSearchIndexOptions.postingBudget */
const DEFAULT_POSTING_BUDGET = 1_000;
const tokenize = MiniSearch.getDefault("tokenize") as (text: string) => string[];
const identity = (text: string) => text;
const single = (text: string) => [text];

/** Options of `ToolSearchIndex`. */
export interface ToolSearchIndexOptions {
  /**
   * How many (tool, field) postings one query may score. BM25 cost grows with how many tools
   * contain each query word, and words found in thousands of tools carry little weight (low IDF),
   * so past this budget a word is scored in fewer fields (without the source blurb and parameter
   * names, then name and keywords only) or skipped; the rarest word is always scored in full.
   * The built-in catalog never reaches it. `Infinity` scores every word everywhere.
   * @default 1000
   */
  postingBudget?: number;
}

/**
 * A search index over one tool list. Building costs about a second per ten thousand tools; reuse it
 * (see `toolSearchIndexFor`).
 * @example
 * const index = new ToolSearchIndex(surface.tools(threadId));
 * index.search("fetch_abstracts")[0]?.name; // "mcp__pubmed__fetch_abstracts"
 */
export class ToolSearchIndex {
  readonly #tools: readonly SurfaceTool[];
  readonly #names: NameIndex;
  readonly #planner: QueryPlanner;
  readonly #mini: MiniSearch<ToolSearchDocument>;

  /**
   * @param tools the tools to index (normally the deferred tools of a session)
   * @param options the posting budget
   */
  constructor(tools: readonly SurfaceTool[], options: ToolSearchIndexOptions = {}) {
    this.#tools = tools;
    this.#names = new NameIndex(tools);
    const planner = new QueryPlanner(options.postingBudget ?? DEFAULT_POSTING_BUDGET);
    this.#planner = planner;
    let current = -1;
    this.#mini = new MiniSearch<ToolSearchDocument>({
      fields: [...SEARCH_FIELDS],
      extractField: (document, field) => {
        current = document.id;
        return document[field as keyof ToolSearchDocument];
      },
      processTerm: (term, field) => {
        const normalized = normalizeTerm(term);
        // Only indexing passes a field; counting there gives the planner its document frequencies.
        if (normalized !== null && field !== undefined) planner.count(normalized, field, current);
        return normalized;
      },
      searchOptions: { boost: SEARCH_BOOST, weights: { prefix: 0.4, fuzzy: 0.25 } },
    });
    this.#mini.addAll(tools.map(toSearchDocument));
  }

  /** @returns the indexed tools, in the order given */
  get tools(): readonly SurfaceTool[] {
    return this.#tools;
  }

  /**
   * Finds tools by one exact reference: model-visible name, `source.tool`, `source__tool` or a bare
   * tool id (which may name one tool in several sources). Case-insensitive.
   * @param ref the reference
   * @returns the matching tools, in index order
   */
  resolve(ref: string): SurfaceTool[] {
    return this.#names.resolve(ref).flatMap((id) => this.#tools[id] ?? []);
  }

  /**
   * Runs a `tool_search` query.
   * @param query `select:a,b` (exact names, listed order, up to 20), `+term rest` (every `+term` required), or free text
   * @param maxResults how many hits, clamped to 1..20
   * @returns hits, best first
   */
  search(query: string, maxResults = DEFAULT_MAX_RESULTS): ToolSearchHit[] {
    const parsed = parseToolSearchQuery(query);
    if (parsed.kind === "select") return this.#select(parsed.names);
    const limit = clampMaxResults(maxResults);
    const allowed = this.#required(parsed.required);
    const hits = new Map<number, { tier: number; score: number; matchedIn: string[] }>();
    if (parsed.required.length === 0) {
      for (const [id, match] of this.#names.matches(parsed.text)) {
        const exact = match === "exact";
        hits.set(id, {
          tier: exact ? EXACT_TIER : SUFFIX_TIER,
          score: 0,
          matchedIn: [exact ? "name" : "name-suffix"],
        });
      }
    }
    const tiered = hits.size;
    const plan = this.#planner.plan(parsed.text);
    const filter = allowed && ((r: SearchResult) => allowed.has(r.id as number));
    const ranked =
      plan.length === 0
        ? []
        : this.#mini.search(
            { queries: plan, combineWith: "OR", tokenize: single, processTerm: identity },
            filter ? { filter } : {},
          );
    for (const result of ranked) {
      const id = result.id as number;
      const hit = hits.get(id);
      if (hit) {
        hit.score = result.score;
        for (const field of matchedFields(result.match)) {
          if (!hit.matchedIn.includes(field)) hit.matchedIn.push(field);
        }
      } else if (hits.size < limit + tiered) {
        // Results come sorted by score, so later ones only matter for the name matches above.
        hits.set(id, { tier: 0, score: result.score, matchedIn: matchedFields(result.match) });
      }
    }
    return [...hits.entries()]
      .sort(([idA, a], [idB, b]) => b.tier - a.tier || b.score - a.score || idA - idB)
      .slice(0, limit)
      .map(([id, hit]) => ({
        name: this.#tools[id]?.name ?? "",
        score: Math.round((hit.tier * TIER_SCORE + hit.score) * 1000) / 1000,
        matchedIn: hit.matchedIn,
      }));
  }

  #select(names: readonly string[]): ToolSearchHit[] {
    const seen = new Set<string>();
    const hits: ToolSearchHit[] = [];
    for (const ref of names) {
      for (const tool of this.resolve(ref)) {
        if (seen.has(tool.name) || hits.length >= MAX_RESULTS_LIMIT) continue;
        seen.add(tool.name);
        hits.push({ name: tool.name, score: 1, matchedIn: ["select"] });
      }
    }
    return hits;
  }

  /** Positions of the tools that contain every `+term` (as a word or word prefix); `undefined` for none. */
  #required(terms: readonly string[]): Set<number> | undefined {
    let allowed: Set<number> | undefined;
    for (const term of terms) {
      // A required word that normalises to nothing (e.g. "+the") constrains nothing.
      if (!tokenize(term).some((token) => normalizeTerm(token) !== null)) continue;
      const found = this.#mini.search(term, { prefix: true, fuzzy: false, combineWith: "AND" });
      const ids = new Set(found.map((r) => r.id as number));
      allowed = allowed ? new Set([...allowed].filter((id) => ids.has(id))) : ids;
    }
    return allowed;
  }
}

const indexes = new WeakMap<readonly SurfaceTool[], ToolSearchIndex>();
const byFingerprint = new LRUCache<string, ToolSearchIndex>({ max: 8 });

/**
 * The search index of a tool list, built once: reused for the same array (as `ToolSurface.tools`
 * returns per catalog revision) or for an equal list (same names and definition hashes, in order).
 * @param tools the tools
 * @returns a cached or new index
 */
export function toolSearchIndexFor(tools: readonly SurfaceTool[]): ToolSearchIndex {
  const cached = indexes.get(tools);
  if (cached) return cached;
  const fingerprint = tools.map((t) => `${t.name}\u0000${t.definitionHash}`).join("\u0001");
  let index = byFingerprint.get(fingerprint);
  if (!index) {
    index = new ToolSearchIndex(tools);
    byFingerprint.set(fingerprint, index);
  }
  indexes.set(tools, index);
  return index;
}
