/**
 * Which identifiers and URLs name the same work, for evidence review. The bundled sources write a
 * record's identifier without prefix (`2403.01234`, `22663011`, `PMC3386462`, `10.1101/2024.01.01.1`)
 * while candidates, claims and users write `arXiv:2403.01234v1`, `PMID:22663011`, `pmc3386462.1` or a
 * landing-page URL. Hand-written: the rules mirror the source servers' normalizers, which the core does
 * not import (servers sit above artifacts in the layering).
 */
import type { McpRecord } from "../contract/index.js";

/** Cross-reference types that name the same work as the record (a `published-doi` is another version). */
const SAME_WORK_TYPES = new Set(["pmid", "pmcid", "doi", "arxiv"]);

const ARXIV_NEW = /^(\d{4}\.\d{4,5})(?:v\d+)?$/i;
const ARXIV_OLD = /^([a-z]+(?:-[a-z]+)*)(?:\.[a-z]{2})?\/(\d{7})(?:v\d+)?$/i;
const PMCID = /^pmc(\d+)(?:\.\d+)?$/i;
const DOI = /^10\.\d{4,9}\/\S+$/;
// bioRxiv/medRxiv DOIs (10.1101/…) are written with a version suffix on their pages; the DOI has none.
const PREPRINT_DOI_VERSION = /^(10\.1101\/[\d.]+)v\d+$/;

/** Landing pages whose path ends in the identifier: arXiv abs/pdf, doi.org, PubMed, PMC, Europe PMC. */
const URL_FORMS: readonly RegExp[] = [
  /^(?:export\.)?arxiv\.org\/(?:abs|pdf|html)\/(.+?)(?:\.pdf)?$/,
  /^(?:dx\.)?doi\.org\/(.+)$/,
  /^pubmed\.ncbi\.nlm\.nih\.gov\/(\d+)$/,
  /^(?:pmc\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov\/pmc)\/articles\/(pmc[\d.]+)$/i,
  /^europepmc\.org\/(?:article\/(?:med|pmc)\/|articles\/)([^/]+)$/i,
];

/**
 * The comparison key of a work identifier. Rule: strip a landing-page URL to its identifier, then a
 * `arXiv:`/`PMID:`/`PMCID:`/`doi:` prefix (and arXiv's DataCite DOI prefix `10.48550/arXiv.`); drop
 * version suffixes (arXiv `v2`, PMCID `.1`, bioRxiv DOI `v3`), because records name the work and
 * candidates a version of it; upper-case PMCIDs and lower-case DOIs and arXiv ids (both are
 * case-insensitive). Any other identifier is only trimmed and compared exactly.
 * @param value an identifier as a record, candidate or claim writes it
 * @returns the key; equal keys name the same work within one source
 * @example workIdentifierKey("arXiv:2403.01234v1") === workIdentifierKey("2403.01234") // true
 */
export function workIdentifierKey(value: string): string {
  let text = value.trim();
  const path = hostPath(text);
  if (path !== undefined) {
    for (const form of URL_FORMS) {
      const match = form.exec(path);
      if (match?.[1]) {
        text = match[1];
        break;
      }
    }
  }
  text = text
    .replace(/^(?:doi:\s*)?10\.48550\/arxiv\./i, "")
    .replace(/^(?:arxiv|pmid|pmcid|doi)\s*:\s*/i, "");
  const arxivNew = ARXIV_NEW.exec(text);
  if (arxivNew?.[1]) return arxivNew[1];
  const arxivOld = ARXIV_OLD.exec(text);
  if (arxivOld?.[1] && arxivOld[2]) return `${arxivOld[1].toLowerCase()}/${arxivOld[2]}`;
  const pmcid = PMCID.exec(text);
  if (pmcid?.[1]) return `PMC${pmcid[1]}`;
  if (DOI.test(text)) {
    const doi = text.toLowerCase();
    return PREPRINT_DOI_VERSION.exec(doi)?.[1] ?? doi;
  }
  return text;
}

/**
 * The keys a claim may cite a record by: its identifier and the identifiers of its citations.
 * @param record a normalized record
 * @returns the keys (see `workIdentifierKey`)
 */
export function citedRecordKeys(record: McpRecord): Set<string> {
  const ids = [
    record.identifier,
    record.primaryCitation.identifier,
    ...record.citations.map((c) => c.identifier),
  ];
  return new Set(ids.filter((id): id is string => id !== undefined && id !== "").map(workIdentifierKey));
}

/**
 * The keys a download of the record's work may carry as `sourceRecordId`: the cited keys plus its
 * cross-references of the same work (a PubMed record `22663011` is downloaded as its `PMC3386462`).
 * @param record a normalized record
 * @returns the keys (see `workIdentifierKey`)
 */
export function recordWorkKeys(record: McpRecord): Set<string> {
  const keys = citedRecordKeys(record);
  for (const reference of record.crossReferences) {
    if (SAME_WORK_TYPES.has(reference.identifierType.toLowerCase())) {
      keys.add(workIdentifierKey(reference.identifier));
    }
  }
  return keys;
}

/**
 * The comparison form of a URL: scheme and host lower-cased, default port and fragment dropped, and a
 * trailing slash of the path removed. A string that does not parse is only trimmed.
 * @param url a URL as a record or a claim writes it
 * @returns the key; equal keys are the same page
 */
export function urlKey(url: string): string {
  try {
    const parsed = new URL(url.trim());
    const path = parsed.pathname.length > 1 ? parsed.pathname.replace(/\/+$/, "") : "";
    return `${parsed.protocol}//${parsed.host}${path}${parsed.search}`;
  } catch {
    return url.trim();
  }
}

/**
 * Every URL a record offers for citation: its `url`, its primary citation's and its citations'.
 * @param record a normalized record
 * @returns the URL keys (see `urlKey`)
 */
export function recordUrlKeys(record: McpRecord): Set<string> {
  return new Set([record.url, record.primaryCitation.url, ...record.citations.map((c) => c.url)].map(urlKey));
}

/** `host/path` of a URL-looking identifier (scheme and `www.` optional, query and trailing slash dropped). */
function hostPath(value: string): string | undefined {
  const match = /^(?:https?:\/\/)?(?:www\.)?([a-z0-9-]+(?:\.[a-z0-9-]+)+)(\/[^?#]*?)\/?(?:[?#].*)?$/i.exec(
    value,
  );
  if (!match?.[1] || !match[2]) return undefined;
  try {
    return `${match[1].toLowerCase()}${decodeURIComponent(match[2])}`;
  } catch {
    return undefined;
  }
}
