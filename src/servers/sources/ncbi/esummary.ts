/**
 * ESummary (JSON) for the NCBI sources that read document summaries: clinvar and geo. It sits here, not in
 * ../ncbi/eutils.ts, only because that shared file belongs to another owner; it uses the same endpoint.
 */

import { ProviderError } from "../provider-error.js";
import type { ProviderAnswer, SourceHttp } from "../source-module.js";
import { eutilsJson } from "./eutils.js";

/** One ESummary document: NCBI's JSON object for one UID. */
export type SummaryItem = Record<string, unknown>;

/** The documents of one ESummary, split into found and missing UIDs. */
export interface EsummaryResult {
  /** Documents by UID, for the UIDs NCBI had a summary of. */
  items: Map<string, SummaryItem>;
  /** Requested UIDs without a document (NCBI's per-UID "cannot get document summary", or absent). */
  missing: string[];
}

/**
 * Runs an ESummary (JSON) for a list of UIDs.
 * @param http the source's HTTP client (with the `eutils` endpoint)
 * @param db the Entrez database (`clinvar`, `gds`)
 * @param uids distinct UIDs (at most a few hundred: they travel in the URL)
 * @returns found documents and missing UIDs
 * @throws ProviderError `rate_limited`, `upstream_unavailable` (HTTP failure or malformed answer)
 */
export async function esummary(
  http: SourceHttp,
  db: string,
  uids: readonly string[],
): Promise<EsummaryResult> {
  if (uids.length === 0) return { items: new Map(), missing: [] };
  const response = await http.request("eutils", "/esummary.fcgi", {
    query: { db, id: uids.join(","), retmode: "json" },
    accept: "application/json",
  });
  return parseEsummaryJson(response, uids);
}

/**
 * Parses an ESummary JSON answer.
 * @param answer the answer
 * @param uids the requested UIDs, in order
 * @returns found documents and missing UIDs (in request order)
 * @throws ProviderError `rate_limited` for NCBI's over-limit body, `upstream_unavailable` when malformed
 */
export function parseEsummaryJson(answer: ProviderAnswer, uids: readonly string[]): EsummaryResult {
  const body = eutilsJson(answer);
  const items = new Map<string, SummaryItem>();
  const result = body.result;
  if (typeof result !== "object" || result === null || Array.isArray(result)) {
    // With no valid UID at all NCBI answers {"esummaryresult": ["Invalid uid … at position=0"]}.
    if (Array.isArray(body.esummaryresult)) return { items, missing: [...uids] };
    throw new ProviderError("upstream_unavailable", `${answer.host} sent a malformed ESummary answer.`, {
      status: answer.status,
    });
  }
  for (const [uid, item] of Object.entries(result as Record<string, unknown>)) {
    if (uid === "uids" || typeof item !== "object" || item === null || Array.isArray(item)) continue;
    if ("error" in item) continue;
    items.set(uid, item as SummaryItem);
  }
  return { items, missing: uids.filter((uid) => !items.has(uid)) };
}

/**
 * A string field of a summary document.
 * @param item the document
 * @param name the field
 * @returns the trimmed text, or undefined when absent or empty
 */
export function summaryText(item: SummaryItem, name: string): string | undefined {
  const value = item[name];
  if (typeof value === "number") return String(value);
  return typeof value === "string" ? value.trim() || undefined : undefined;
}

/**
 * An object field of a summary document.
 * @param value a field value
 * @returns the object, or an empty one when absent or not an object
 */
export function summaryObject(value: unknown): SummaryItem {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as SummaryItem) : {};
}

/**
 * A list field of a summary document.
 * @param value a field value
 * @returns the list, or an empty one when absent or not a list
 */
export function summaryList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
