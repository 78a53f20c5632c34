/**
 * The list envelope every ChEMBL web-service resource answers with
 * (`{"<plural>": [...], "page_meta": {limit, offset, next, previous, total_count}}`), and readers for the
 * loosely typed fields inside its items (ChEMBL sends many numbers as decimal strings, such as `"4.0"`).
 */

import { offsetPaging } from "../paging.js";
import { isProviderError, ProviderError } from "../provider-error.js";
import { parseJsonBody } from "../provider-http.js";
import type { ProviderAnswer, ProviderRequest, SourceHttp } from "../source-module.js";

/** The key of ChEMBL's web-service endpoint in the source module. */
export const CHEMBL_API = "api";

/** A JSON object as the provider sent it. */
export type ChemblItem = Readonly<Record<string, unknown>>;

/** One page of a ChEMBL list resource. */
export interface ChemblPage {
  items: ChemblItem[];
  /** `page_meta.total_count`: every match, not only this page. */
  total: number;
  /** `page_meta.offset` of the first item. */
  offset: number;
}

/**
 * Parses a ChEMBL list answer.
 * @param answer the JSON body, host and status
 * @param listKey the plural key of the resource (`molecules`, `targets`, `activities`, `mechanisms`)
 * @returns the items and paging
 * @throws ProviderError `upstream_unavailable` when the body is not JSON or lacks the list or `page_meta`
 *   (never an empty success for a malformed answer)
 */
export function parseChemblPage(answer: ProviderAnswer, listKey: string): ChemblPage {
  const body = parseJsonBody(answer);
  const list = isObject(body) ? body[listKey] : undefined;
  const meta = isObject(body) ? body.page_meta : undefined;
  if (!Array.isArray(list) || !isObject(meta)) {
    throw new ProviderError(
      "upstream_unavailable",
      `${answer.host} sent an answer without the expected ${listKey} list.`,
      { status: answer.status },
    );
  }
  const items = list.filter(isObject);
  return {
    items,
    total: numberField(meta.total_count) ?? items.length,
    offset: numberField(meta.offset) ?? 0,
  };
}

/**
 * Fetches and parses one page of a ChEMBL list resource as JSON.
 * @param http the source's HTTP client
 * @param path the resource path below the API base (`/molecule/search.json`)
 * @param listKey the plural key of the resource
 * @param request query parameters and accepted statuses
 * @returns the parsed page
 * @throws ProviderError as `SourceHttp.request` and `parseChemblPage`
 */
export async function fetchChemblPage(
  http: SourceHttp,
  path: string,
  listKey: string,
  request: ProviderRequest = {},
): Promise<ChemblPage> {
  const response = await http.request(CHEMBL_API, path, { accept: "application/json", ...request });
  return parseChemblPage(response, listKey);
}

/**
 * The paging facts of a tool result, from one page.
 * @param page the parsed page
 * @param start the offset that was asked for
 * @param maxReachable the deepest offset the resource serves @default Infinity
 * @returns `total`, `start`, `returned`, `hasMore` and, when there is more, `nextStart`
 */
export function pagingData(page: ChemblPage, start: number, maxReachable = Number.POSITIVE_INFINITY) {
  return offsetPaging({ total: page.total, start, fetched: page.items.length, reachable: maxReachable });
}

/**
 * Whether a value is a plain JSON object.
 * @param value anything parsed from JSON
 * @returns true for an object that is not an array or null
 */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A non-empty trimmed string field.
 * @param value the field
 * @returns the text, or undefined for null, non-strings and blank strings
 */
export function textField(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/**
 * A numeric field that ChEMBL may send as a number or a decimal string (`"180.16"`, `"4.0"`).
 * @param value the field
 * @returns the finite number, or undefined
 */
export function numberField(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value !== "string" || value.trim() === "") return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : undefined;
}

/**
 * A list field of objects.
 * @param value the field
 * @returns its object items; empty for anything else
 */
export function objectList(value: unknown): ChemblItem[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

/**
 * Drops undefined entries, so that structured data carries only what the provider stated.
 * @param entries field name → value
 * @returns the defined entries
 */
export function definedEntries(entries: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined));
}

/**
 * Tells "no such id" from "no data": ChEMBL answers a list filter on an unknown id with an empty list.
 * @param http the source's HTTP client
 * @param resource the entity kind
 * @param id a normalized ChEMBL id
 * @throws ProviderError `not_found` when ChEMBL has no such entity; other failures as `SourceHttp.request`
 */
export async function expectChemblEntity(
  http: SourceHttp,
  resource: "molecule" | "target",
  id: string,
): Promise<void> {
  try {
    await http.request(CHEMBL_API, `/${resource}/${id}.json`, { accept: "application/json" });
  } catch (error) {
    if (isProviderError(error) && error.code === "not_found") {
      throw new ProviderError("not_found", `ChEMBL has no ${resource} ${id}.`, { status: 404 });
    }
    throw error;
  }
}

/** How a filtered ChEMBL listing (activities, mechanisms) names what it lists. */
export interface FilteredListing<R> {
  /** Reads one item; undefined for an item without its id. */
  toRecord: (item: ChemblItem) => R | undefined;
  /** What one item is, for the dropped-items warning (`activity`, `mechanism`). */
  noun: string;
  /** The id an item must carry (`an activity id`). */
  idName: string;
  molecule?: string | undefined;
  target?: string | undefined;
  /** The warning for an empty listing whose filter ids exist. */
  emptyWarning: string;
}

/**
 * The records of one page of a filtered listing, with its warnings. ChEMBL answers a filter on an unknown id
 * with an empty list, so an empty page checks the filter ids to tell "no such id" from "no data".
 * @param http the source's HTTP seam
 * @param page the page read
 * @param listing how to read and name its items
 * @returns the records and warnings
 * @throws ProviderError `not_found` when a filter id names no ChEMBL entity
 */
export async function filteredListingRecords<R>(
  http: SourceHttp,
  page: ChemblPage,
  listing: FilteredListing<R>,
): Promise<{ records: R[]; warnings: string[] }> {
  const records = page.items.flatMap((item) => listing.toRecord(item) ?? []);
  const warnings: string[] = [];
  const dropped = page.items.length - records.length;
  if (dropped > 0) {
    warnings.push(`${dropped} ChEMBL ${listing.noun} item(s) without ${listing.idName} were left out.`);
  }
  if (page.total === 0) {
    if (listing.molecule) await expectChemblEntity(http, "molecule", listing.molecule);
    if (listing.target) await expectChemblEntity(http, "target", listing.target);
    warnings.push(listing.emptyWarning);
  }
  return { records, warnings };
}
