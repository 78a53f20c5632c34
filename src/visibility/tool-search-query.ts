/** The query language of `tool_search`: `select:a,b`, `+term rest`, or free text. */

/** `tool_search`'s default number of results. */
export const DEFAULT_MAX_RESULTS = 5;
/** `tool_search`'s largest number of results. */
export const MAX_RESULTS_LIMIT = 20;

/** A parsed `tool_search` query. */
export type ToolSearchQuery =
  | {
      /** `select:a,b`: exact names (model-visible, `source.tool`, `source__tool` or a bare tool id). */
      kind: "select";
      names: string[];
    }
  | {
      kind: "search";
      /** Terms written `+term`: a hit must contain every one of them. */
      required: string[];
      /** The whole query without the `+` markers, ranked as free text. */
      text: string;
    };

/**
 * Parses a `tool_search` query.
 * @param query e.g. `select:mcp__pubmed__search,arxiv.lookup`, `+uniprot sequence`, `protein structure`
 * @returns the parsed query; `select:` is case-insensitive, names are trimmed and empty ones dropped
 * @example parseToolSearchQuery("+clinvar brca1 variants") // {kind: "search", required: ["clinvar"], text: "clinvar brca1 variants"}
 */
export function parseToolSearchQuery(query: string): ToolSearchQuery {
  const trimmed = query.trim();
  const select = /^select:(.*)$/is.exec(trimmed);
  if (select) {
    const names = (select[1] ?? "")
      .split(",")
      .map((name) => name.trim())
      .filter((name) => name !== "");
    return { kind: "select", names: [...new Set(names)] };
  }
  const required: string[] = [];
  const words = trimmed.split(/\s+/).filter((word) => word !== "");
  const text = words
    .map((word) => {
      if (word.length > 1 && word.startsWith("+")) {
        required.push(word.slice(1));
        return word.slice(1);
      }
      return word;
    })
    .join(" ");
  return { kind: "search", required, text };
}

/**
 * Clamps a requested result count to 1..20 (default 5).
 * @param requested `max_results` as given (may be absent, fractional or out of range)
 * @returns a whole number in 1..20
 */
export function clampMaxResults(requested: number | undefined): number {
  if (requested === undefined || !Number.isFinite(requested)) return DEFAULT_MAX_RESULTS;
  return Math.min(MAX_RESULTS_LIMIT, Math.max(1, Math.floor(requested)));
}
