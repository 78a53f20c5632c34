/**
 * Identifier normalization shared by sources: blank optional inputs, `PREFIX:` and URL forms, and DOIs.
 * Source-specific formats live next to their source (pubmed/pubmed-ids.ts, arxiv/arxiv-ids.ts).
 */
import { ProviderError } from "./provider-error.js";

/**
 * Whether an optional input counts as absent (`undefined`, `null`, or an empty/blank string).
 * @param value the raw input value
 * @returns true when absent
 */
export function isBlank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === "string" && value.trim() === "");
}

/**
 * Removes a URL's scheme, `www.` and query/fragment, for matching identifier URLs.
 * @param value user input
 * @returns `host/path` when the input looks like a URL on a dotted host, else undefined
 */
export function urlHostPath(value: string): string | undefined {
  const match = /^(?:https?:\/\/)?(?:www\.)?([a-z0-9-]+(?:\.[a-z0-9-]+)+)(\/[^?#]*)?(?:[?#].*)?$/i.exec(
    value.trim(),
  );
  if (!match?.[2]) return undefined;
  try {
    return `${match[1]?.toLowerCase()}${decodeURIComponent(match[2])}`;
  } catch {
    return undefined;
  }
}

/**
 * Normalizes a DOI from `10.x/y`, `doi:10.x/y`, or a `doi.org` / `dx.doi.org` URL.
 * @param value user input
 * @returns the DOI (`10.1056/NEJMoa1203421`), or undefined when it is not one
 */
export function normalizeDoi(value: string): string | undefined {
  let text = value.trim();
  const hostPath = urlHostPath(text);
  if (hostPath?.startsWith("doi.org/") || hostPath?.startsWith("dx.doi.org/")) {
    text = hostPath.slice(hostPath.indexOf("/") + 1);
  }
  text = text.replace(/^doi:\s*/i, "");
  return /^10\.\d{4,9}\/\S+$/.test(text) ? text : undefined;
}

/**
 * Throws the standard `invalid_id` error. The message names what was expected; it quotes the rejected
 * value only when it looks like an identifier (short, no spaces), so free text is never echoed.
 * @param value the rejected identifier
 * @param expected what the tool accepts, e.g. "a PubMed identifier (PMID)"
 * @throws ProviderError `invalid_id`, always
 */
export function invalidId(value: string, expected: string): never {
  const shown = /^[\w.:/-]{1,64}$/.test(value) ? `'${value}'` : "The given identifier";
  throw new ProviderError("invalid_id", `${shown} is not ${expected}.`);
}
