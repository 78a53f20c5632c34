/**
 * Turns wiki page objects into `curated-record`s: the page is the primary citation (configured origin plus
 * validated path, version = SHA-256 of the page response), its `source_refs`/`sources` strings become
 * text-only cross-references, and every field of the page passes through in `structuredData`.
 */
import type { McpRecord } from "../../contract/index.js";
import { buildRecord } from "../sources/record-builder.js";
import { wikiPageUrl } from "./wiki-origin.js";

/** The source id of the LLM Wiki bridge. */
export const LLM_WIKI_SOURCE_ID = "llm-wiki";

/** Fields a wiki may use for a page's last update, in order of preference. */
const UPDATE_FIELDS = ["updated_at", "updated", "last_modified", "modified_at"] as const;

/**
 * Whether a value is a plain JSON object.
 * @param value anything parsed from JSON
 * @returns true for a non-array object
 */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The path that identifies a page: `path`, else `page_id`.
 * @param page a page object or search source
 * @returns the path, or undefined when the page has neither
 */
export function pagePathOf(page: Record<string, unknown>): string | undefined {
  for (const key of ["path", "page_id"] as const) {
    const value = page[key];
    if (typeof value === "string" && value.trim() !== "") return value.trim();
    if (typeof value === "number") return String(value);
  }
  return undefined;
}

/**
 * The identifiers of the original material a page rests on (`source_refs`, else `sources`).
 * @param page a page object
 * @returns the non-empty strings of the first of those arrays that is present, or undefined when neither is
 */
export function sourceRefsOf(page: Record<string, unknown>): string[] | undefined {
  for (const key of ["source_refs", "sources"] as const) {
    const value = page[key];
    if (Array.isArray(value))
      return value.filter((v): v is string => typeof v === "string" && v.trim() !== "");
  }
  return undefined;
}

/**
 * Whether a page object lacks its sources or its update time (a batch answer may leave them out).
 * @param page a page object
 * @returns true when `get_page` could fill something in
 */
export function lacksSourcesOrUpdateTime(page: Record<string, unknown>): boolean {
  return sourceRefsOf(page) === undefined || !UPDATE_FIELDS.some((key) => page[key] !== undefined);
}

/**
 * Builds the record of one wiki page.
 * @param origin the configured wiki origin
 * @param path the page path (validated and encoded here; never a URL the wiki returned)
 * @param page the page object, passed through whole in `structuredData`
 * @param version the SHA-256 of the page response
 * @returns the record
 * @throws ProviderError `invalid_input` when the path is not a safe relative wiki path
 */
export function wikiPageRecord(
  origin: string,
  path: string,
  page: Record<string, unknown>,
  version: string,
): McpRecord {
  const url = wikiPageUrl(origin, path);
  const title = typeof page.title === "string" ? page.title : path;
  // Original material may be anything (a DOI, a file name, a URL): kept as text, never as a link.
  const crossReferences = (sourceRefsOf(page) ?? []).map((ref) => ({
    identifier: ref,
    identifierType: "source-ref",
  }));
  return buildRecord({
    source: LLM_WIKI_SOURCE_ID,
    identifier: path,
    identifierType: "wiki-page",
    label: `wiki:${path}`,
    url,
    citationVersion: version,
    title,
    crossReferences,
    structuredData: page,
    contentScope: "curated-record",
  });
}
