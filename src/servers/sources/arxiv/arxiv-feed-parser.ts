/** Parses arXiv API answers (Atom 1.0 with OpenSearch and arXiv extensions) into normalized records. */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { normalizeDoi } from "../identifiers.js";
import { buildRecord, doiReference } from "../record-builder.js";
import { integrityWarning, type RecordIntegrity } from "../record-integrity.js";
import type { ProviderAnswer } from "../source-module.js";
import { asArray, asNode, markupText, parseXml, type XmlNode, xmlAttr, xmlText } from "../xml-document.js";
import { arxivAbsUrl, arxivIdOfEntry } from "./arxiv-ids.js";

/** An author's or arXiv's withdrawal comment: "This paper has been withdrawn by the author", "Withdrawn: …". */
const WITHDRAWN_COMMENT =
  /^\s*withdrawn\b|\b(?:paper|article|submission|manuscript|preprint|version|work)\s+(?:has\s+been|is|was)\s+(?:\w+\s+)?withdrawn\b/i;

/** One paper of a feed. */
export interface ArxivEntry {
  /** Id without version. */
  id: string;
  /** The version the feed describes (the latest unless a version was asked for). */
  version: number;
  /** The paper's licence URL, when the feed states one. */
  license: string | undefined;
  record: McpRecord;
}

/** A parsed feed. */
export interface ArxivFeed {
  total: number;
  start: number;
  entries: ArxivEntry[];
  /** Messages of API error entries (the API reports a bad id as an entry titled "Error"). */
  errors: string[];
}

/**
 * Parses an arXiv API `query` answer.
 * @param answer the Atom XML body, host and status
 * @returns paging totals, paper entries and API error messages
 * @throws ProviderError `upstream_unavailable` when the XML is malformed or is not a feed
 */
export function parseArxivFeed(answer: ProviderAnswer): ArxivFeed {
  const feed = parseXml(answer, {
    root: "feed",
    arrayTags: ["entry", "author", "link", "category"],
    markupTags: ["title", "summary"],
    removeNamespacePrefix: true,
  });
  const entries: ArxivEntry[] = [];
  const errors: string[] = [];
  for (const node of asArray(feed.entry)) {
    const entry = asNode(node);
    const entryId = xmlText(entry.id) ?? "";
    const parsed = arxivIdOfEntry(entryId);
    if (parsed) entries.push(toEntry(entry, parsed.id, parsed.version ?? 1));
    else if (entryId.includes("/api/errors"))
      errors.push(markupText(entry.summary) ?? "unknown arXiv API error");
  }
  return {
    total: Number(xmlText(feed.totalResults) ?? entries.length) || 0,
    start: Number(xmlText(feed.startIndex) ?? 0) || 0,
    entries,
    errors,
  };
}

function toEntry(entry: XmlNode, id: string, version: number): ArxivEntry {
  const versioned = `${id}v${version}`;
  const published = xmlText(entry.published);
  // <arxiv:doi> is the DOI of the published version (several, space-separated, when the authors give more).
  const publishedDois = (xmlText(entry.doi) ?? "").split(/\s+/).flatMap((doi) => normalizeDoi(doi) ?? []);
  const links = asArray(entry.link);
  // The API usually omits <arxiv:license>; when present it holds the URL as text or as an attribute.
  const license =
    xmlText(entry.license) ??
    xmlAttr(entry.license, "href") ??
    xmlAttr(entry.license, "uri") ??
    xmlAttr(
      links.find((link) => xmlAttr(link, "rel") === "license"),
      "href",
    );
  const categories = asArray(entry.category).flatMap((c) => xmlAttr(c, "term") ?? []);
  const structuredData: Record<string, unknown> = { version: `v${version}`, categories };
  const optional = {
    published,
    updated: xmlText(entry.updated),
    primaryCategory: xmlAttr(entry.primary_category, "term"),
    comment: xmlText(entry.comment),
    journalRef: xmlText(entry.journal_ref),
    license,
    publishedDoi: publishedDois[0],
    publishedDois: publishedDois.length > 1 ? publishedDois : undefined,
  };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) structuredData[key] = value;
  // arXiv keeps withdrawn papers listed; only the comment of the withdrawal version says so.
  const integrity: RecordIntegrity | undefined =
    optional.comment && WITHDRAWN_COMMENT.test(optional.comment)
      ? { status: "withdrawn", notices: [{ type: "withdrawal", url: arxivAbsUrl(versioned) }] }
      : undefined;
  if (integrity) structuredData.integrity = integrity;
  const warnings = integrity ? [integrityWarning(integrity, `arXiv:${versioned}`)] : [];
  const publishedVersion = publishedVersionWarning(`arXiv:${versioned}`, publishedDois, optional.journalRef);
  if (publishedVersion) warnings.push(publishedVersion);
  const record = buildRecord({
    source: "arxiv",
    identifier: id,
    identifierType: "arxiv",
    label: `arXiv:${versioned}`,
    url: arxivAbsUrl(id),
    citationUrl: arxivAbsUrl(versioned),
    citationVersion: `v${version}`,
    title: markupText(entry.title),
    abstract: markupText(entry.summary),
    authors: asArray(entry.author).flatMap((author) => xmlText(asNode(author).name) ?? []),
    year: published ? Number(published.slice(0, 4)) : undefined,
    crossReferences: publishedDois.map(publishedDoiReference),
    // arXiv does not referee; a journal_ref says a version appeared elsewhere, not that this text was reviewed.
    peerReviewStatus: "preprint",
    structuredData,
    warnings,
  });
  return { id, version, license, record };
}

// Typed like bioRxiv's published DOI: another version of the work, not a second name of the arXiv record.
function publishedDoiReference(doi: string): CrossReference {
  return { ...doiReference(doi), identifierType: "published-doi" };
}

// arXiv's DOI and journal reference come from the authors; either says a published version exists.
function publishedVersionWarning(
  label: string,
  dois: readonly string[],
  journalRef: string | undefined,
): string | undefined {
  if (dois.length === 0 && !journalRef) return undefined;
  const where =
    dois.length === 0
      ? `${journalRef} (no DOI given)`
      : `${dois.map((doi) => `doi:${doi}`).join(", ")}${journalRef ? ` (${journalRef})` : ""}`;
  return `The authors report a published version of ${label}: ${where}; prefer citing the published version.`;
}
