/** Exact and suffix lookups of tool names, for `select:` and for ranking name matches first. */

/** How a one-word query matches a tool's name. */
export type NameMatch = "exact" | "suffix";

/** The naming fields of a tool. */
export interface NamedTool {
  name: string;
  qualifiedName: string;
  sourceId: string;
  toolId: string;
}

/** Case-insensitive maps from every way of naming a tool to its position in a list. */
export class NameIndex {
  /** Model-visible name, `source.tool` and `source__tool` -> positions. */
  readonly #exact = new Map<string, number[]>();
  /** Bare tool id -> positions (one id may exist in several sources). */
  readonly #toolIds = new Map<string, number[]>();
  /** Every tail of a name after an underscore -> positions. */
  readonly #suffixes = new Map<string, number[]>();

  /** @param tools the tools, indexed by position */
  constructor(tools: readonly NamedTool[]) {
    tools.forEach((tool, id) => {
      const name = tool.name.toLowerCase();
      for (const key of [name, tool.qualifiedName, `${tool.sourceId}__${tool.toolId}`]) {
        addTo(this.#exact, key.toLowerCase(), id);
      }
      addTo(this.#toolIds, tool.toolId.toLowerCase(), id);
      for (let at = name.indexOf("_"); at >= 0; at = name.indexOf("_", at + 1)) {
        addTo(this.#suffixes, name.slice(at + 1), id);
      }
    });
  }

  /**
   * @param ref a model-visible name, `source.tool`, `source__tool` or a bare tool id
   * @returns positions of the tools it names exactly (a bare id may name several)
   */
  resolve(ref: string): number[] {
    const key = ref.trim().toLowerCase();
    return this.#exact.get(key) ?? this.#toolIds.get(key) ?? [];
  }

  /**
   * How a one-word query matches names: `exact` for a full reference, `suffix` for a bare tool id or
   * the end of a name after an underscore (`abstracts` ends `mcp__pubmed__fetch_abstracts`).
   * @param query the query
   * @returns position -> match; empty for a query with spaces
   */
  matches(query: string): Map<number, NameMatch> {
    const found = new Map<number, NameMatch>();
    const word = query.trim().toLowerCase();
    if (word === "" || /\s/.test(word)) return found;
    for (const id of this.#suffixes.get(word) ?? []) found.set(id, "suffix");
    for (const id of this.#toolIds.get(word) ?? []) found.set(id, "suffix");
    for (const id of this.#exact.get(word) ?? []) found.set(id, "exact");
    return found;
  }
}

function addTo(map: Map<string, number[]>, key: string, id: number): void {
  const ids = map.get(key);
  if (!ids) map.set(key, [id]);
  else if (!ids.includes(id)) ids.push(id);
}
