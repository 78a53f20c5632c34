/** Builds the normalized records every source returns, so that citations and scopes look alike everywhere. */
import type { Citation, ContentScope, CrossReference, McpRecord } from "../../contract/index.js";

/** What a source knows about one record. */
export interface RecordInput {
  source: string;
  /** Stable identifier without prefix (`22663011`, `1605.08386`). */
  identifier: string;
  /** `pmid`, `pmcid`, `arxiv`, `doi`, ... */
  identifierType: string;
  /** Citation label text, e.g. `PMID:22663011`; rendered as a markdown link. */
  label: string;
  /** Canonical HTTPS landing page of the record. */
  url: string;
  /** The cited URL when it differs from `url` (a versioned page). @default url */
  citationUrl?: string;
  /** The version that was read (`v2`). */
  citationVersion?: string;
  /** The title; a missing title becomes a placeholder plus a warning. */
  title: string | undefined;
  abstract?: string | undefined;
  authors?: string[];
  year?: number | undefined;
  crossReferences?: CrossReference[];
  peerReviewStatus?: McpRecord["peerReviewStatus"];
  structuredData?: Record<string, unknown>;
  warnings?: string[];
  /** @default "abstract" when an abstract is present, else "metadata" */
  contentScope?: ContentScope;
}

/**
 * A markdown-labelled citation.
 * @param label the link text, e.g. `PMID:123`
 * @param url the HTTPS URL
 * @param extra identifier, type and version of what was cited
 * @returns the citation, with `label` `[PMID:123](https://pubmed.ncbi.nlm.nih.gov/123/)`
 */
export function markdownCitation(
  label: string,
  url: string,
  extra: Omit<Citation, "label" | "url"> = {},
): Citation {
  return { label: `[${label.replace(/[[\]]/g, "")}](${url})`, url, ...extra };
}

/**
 * A DOI cross-reference resolving through doi.org.
 * @param doi a normalized DOI (`10.1056/NEJMoa1203421`)
 * @returns the cross-reference
 */
export function doiReference(doi: string): CrossReference {
  return { identifier: doi, identifierType: "doi", url: `https://doi.org/${encodeURI(doi)}` };
}

/**
 * Builds a record with an honest content scope (`abstract` only with an abstract) and
 * `fullTextRetrieved: false` (only the governed PDF extraction may mark full text).
 * @param input what the source knows
 * @returns the normalized record
 */
export function buildRecord(input: RecordInput): McpRecord {
  const warnings = [...(input.warnings ?? [])];
  let title = input.title?.trim();
  if (!title) {
    title = `[${input.label}: no title]`;
    warnings.push("The provider gave no title for this record.");
  }
  const abstract = input.abstract?.trim() || undefined;
  const citationUrl = input.citationUrl ?? input.url;
  const citationExtra: Omit<Citation, "label" | "url"> = {
    identifier: input.identifier,
    identifierType: input.identifierType,
  };
  if (input.citationVersion !== undefined) citationExtra.version = input.citationVersion;
  const primaryCitation = markdownCitation(input.label, citationUrl, citationExtra);
  const record: McpRecord = {
    identifier: input.identifier,
    identifierType: input.identifierType,
    title,
    url: input.url,
    source: input.source,
    citations: [primaryCitation],
    primaryCitation,
    contentScope: input.contentScope ?? (abstract ? "abstract" : "metadata"),
    crossReferences: input.crossReferences ?? [],
    fullTextRetrieved: false,
    warnings,
  };
  if (abstract) record.abstract = abstract;
  if (input.authors && input.authors.length > 0) record.authors = input.authors;
  if (input.year !== undefined && Number.isInteger(input.year)) record.year = input.year;
  if (input.peerReviewStatus) record.peerReviewStatus = input.peerReviewStatus;
  if (input.structuredData) record.structuredData = input.structuredData;
  return record;
}
