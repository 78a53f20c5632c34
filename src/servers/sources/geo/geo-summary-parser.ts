/** Turns GEO ESummary documents (db=gds: series, samples, platforms, curated datasets) into records. */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { type SummaryItem, summaryList, summaryObject, summaryText } from "../ncbi/esummary.js";
import { buildRecord } from "../record-builder.js";
import {
  GEO_FTP_ROOT,
  type GeoAccession,
  geoFtpFolder,
  geoRecordUrl,
  normalizeGeoAccession,
} from "./geo-accessions.js";

/** How many of a series' samples a record lists (the count is always given). */
const MAX_LISTED_SAMPLES = 50;

/**
 * Builds the record of one GEO ESummary document.
 * @param item the document
 * @returns the `structured-record` of the accession (its summary as `abstract`), or undefined when the
 *   document has no valid accession
 */
export function geoSummaryRecord(item: SummaryItem): McpRecord | undefined {
  const id = normalizeGeoAccession(summaryText(item, "accession") ?? "");
  if (!id) return undefined;
  const platforms = numbered("GPL", summaryText(item, "gpl"));
  const series = numbered("GSE", summaryText(item, "gse")).filter((gse) => gse !== id.accession);
  const datasets = numbered("GDS", summaryText(item, "gds")).filter((gds) => gds !== id.accession);
  const samples = summaryList(item.samples).map(summaryObject);
  const pubmedIds = summaryList(item.pubmedids)
    .map((pmid) => String(pmid))
    .filter((pmid) => /^\d+$/.test(pmid));
  const bioproject = summaryText(item, "bioproject");
  const published = publicationDate(summaryText(item, "pdat"));
  const sampleCount = Number(item.n_samples);
  const crossReferences: CrossReference[] = [
    ...pubmedIds.map((pmid) => ({
      identifier: pmid,
      identifierType: "pmid",
      url: `https://pubmed.ncbi.nlm.nih.gov/${pmid}/`,
    })),
    ...[...series, ...platforms, ...datasets].map(geoReference),
  ];
  if (bioproject && /^PRJ[A-Z]{1,2}\d+$/.test(bioproject)) {
    crossReferences.push({
      identifier: bioproject,
      identifierType: "bioproject",
      url: `https://www.ncbi.nlm.nih.gov/bioproject/${bioproject}`,
    });
  }
  const structuredData: Record<string, unknown> = {
    accession: id.accession,
    entryType: id.type,
    ...text("studyType", summaryText(item, "gdstype")),
    organisms: split(summaryText(item, "taxon"), /;\s*/),
    platforms,
    series,
    ...(Number.isInteger(sampleCount) ? { sampleCount } : {}),
    ...(samples.length > 0 ? { samples: samples.slice(0, MAX_LISTED_SAMPLES).map(sampleOf) } : {}),
    ...text("valueType", summaryText(item, "valtype")),
    ...text("platformTechnology", summaryText(item, "ptechtype")),
    supplementaryFileTypes: split(summaryText(item, "suppfile"), /,\s*/),
    ...text("published", published),
    ...(pubmedIds.length > 0 ? { pubmedIds } : {}),
    ...text("bioproject", bioproject),
    ftpFolder: `${GEO_FTP_ROOT}${geoFtpFolder(id)}`,
  };
  const warnings: string[] = [];
  if (samples.length > MAX_LISTED_SAMPLES) {
    warnings.push(`Only the first ${MAX_LISTED_SAMPLES} of ${samples.length} samples are listed.`);
  }
  return buildRecord({
    source: "geo",
    identifier: id.accession,
    identifierType: id.type.toLowerCase(),
    label: `GEO:${id.accession}`,
    url: geoRecordUrl(id.accession),
    title: summaryText(item, "title"),
    abstract: summaryText(item, "summary"),
    year: published ? Number(published.slice(0, 4)) : undefined,
    contentScope: "structured-record",
    crossReferences,
    structuredData,
    warnings,
  });
}

/**
 * The accession a GEO ESummary document is about.
 * @param item the document
 * @returns the normalized accession, or undefined
 */
export function summaryAccession(item: SummaryItem): GeoAccession | undefined {
  return normalizeGeoAccession(summaryText(item, "accession") ?? "");
}

function numbered(prefix: string, list: string | undefined): string[] {
  return split(list, /[;,]\s*/)
    .filter((n) => /^\d+$/.test(n))
    .map((n) => `${prefix}${n}`);
}

function geoReference(accession: string): CrossReference {
  return {
    identifier: accession,
    identifierType: accession.slice(0, 3).toLowerCase(),
    url: geoRecordUrl(accession),
  };
}

function sampleOf(sample: SummaryItem): Record<string, string> {
  return {
    ...text("accession", summaryText(sample, "accession")),
    ...text("title", summaryText(sample, "title")),
  };
}

function publicationDate(pdat: string | undefined): string | undefined {
  const match = /^(\d{4})\/(\d{2})\/(\d{2})$/.exec(pdat ?? "");
  return match ? `${match[1]}-${match[2]}-${match[3]}` : undefined;
}

function split(value: string | undefined, separator: RegExp): string[] {
  return (value ?? "")
    .split(separator)
    .map((part) => part.trim())
    .filter(Boolean);
}

function text(name: string, value: string | undefined): Record<string, string> {
  return value ? { [name]: value } : {};
}
