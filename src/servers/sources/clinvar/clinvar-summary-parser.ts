/** Turns ClinVar ESummary documents (db=clinvar, one per variation) into records. */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { type SummaryItem, summaryList, summaryObject, summaryText } from "../ncbi/esummary.js";
import { buildRecord } from "../record-builder.js";
import { clinvarRcvUrl, clinvarVariationUrl, clinvarVersionUrl, vcvAccession } from "./clinvar-ids.js";
import { reviewStars } from "./clinvar-review-status.js";
import type { ClinvarLocation } from "./clinvar-variant.js";

/** One aggregate classification of a variation, as the summary states it. */
export interface SummaryClassification {
  classification: string;
  reviewStatus?: string;
  /** ClinVar's 0–4 stars for the review status. */
  stars?: number;
  /** `YYYY-MM-DD`. */
  lastEvaluated?: string;
  conditions: string[];
}

/** The summary's classification fields by our names; `clinical_significance` is the pre-2024 germline field. */
const CLASSIFICATION_FIELDS = [
  ["germline", ["germline_classification", "clinical_significance"]],
  ["somaticClinicalImpact", ["clinical_impact_classification"]],
  ["oncogenicity", ["oncogenicity_classification"]],
] as const;

/**
 * Builds the record of one ClinVar ESummary document.
 * @param uid the Entrez UID (the variation id)
 * @param item the document
 * @returns the `structured-record` of the variation, cited by its VCV page
 */
export function clinvarSummaryRecord(uid: string, item: SummaryItem): McpRecord {
  const variationId = summaryText(item, "uid") ?? uid;
  const accession = summaryText(item, "accession") ?? vcvAccession(variationId);
  const versioned = summaryText(item, "accession_version");
  const variation = summaryObject(summaryList(item.variation_set)[0]);
  const genes = summaryList(item.genes).map(summaryObject);
  const classifications: Record<string, SummaryClassification> = {};
  for (const [name, fields] of CLASSIFICATION_FIELDS) {
    for (const field of fields) {
      const found = readClassification(summaryObject(item[field]));
      if (found) {
        classifications[name] = found;
        break;
      }
    }
  }
  const rcvs = summaryList(summaryObject(item.supporting_submissions).rcv).filter(isText);
  const scvs = summaryList(summaryObject(item.supporting_submissions).scv).filter(isText);
  const placements = summaryList(variation.variation_loc).map(summaryObject);
  const locations = summaryLocations(placements);
  const bands = [...new Set(placements.map((loc) => summaryText(loc, "band")).filter(isText))];
  const proteinChange = summaryText(item, "protein_change");
  const consequences = summaryList(item.molecular_consequence_list).filter(isText);
  const spdi = summaryText(variation, "canonical_spdi");
  const structuredData: Record<string, unknown> = {
    variationId,
    accession,
    ...(versioned ? { accessionVersion: versioned } : {}),
    ...optional("variantType", summaryText(item, "obj_type") ?? summaryText(variation, "variant_type")),
    genes: genes.flatMap((gene) => (summaryText(gene, "symbol") ? [summaryText(gene, "symbol")] : [])),
    ...optional("proteinChange", proteinChange),
    ...(consequences.length > 0 ? { molecularConsequences: consequences } : {}),
    // Labelled as the VCV and RCV records are: SPDI is 0-based (interbase), the locations 1-based.
    ...optional("canonicalSpdi0based", spdi),
    ...(locations.length > 0 ? { locations } : {}),
    ...(bands.length > 0 ? { cytogeneticBands: bands } : {}),
    ...classifications,
    rcvAccessions: rcvs,
    submissionCount: scvs.length,
  };
  // The label names a version only when its link opens that version.
  const version = /^\d+$/.exec(
    versioned?.startsWith(`${accession}.`) ? versioned.slice(accession.length + 1) : "",
  )?.[0];
  return buildRecord({
    source: "clinvar",
    identifier: accession,
    identifierType: "clinvar_vcv",
    label: `ClinVar:${version ? `${accession}.${version}` : accession}`,
    url: clinvarVariationUrl(variationId),
    ...(versioned ? { citationVersion: versioned } : {}),
    ...(version ? { citationUrl: clinvarVersionUrl(accession, version) } : {}),
    title: summaryText(item, "title"),
    contentScope: "structured-record",
    crossReferences: [
      ...genes.flatMap(geneReference),
      ...dbsnpReferences(summaryList(variation.variation_xrefs).map(summaryObject)),
      ...rcvs.map((rcv) => ({ identifier: rcv, identifierType: "clinvar_rcv", url: clinvarRcvUrl(rcv) })),
    ],
    structuredData,
  });
}

function readClassification(field: SummaryItem): SummaryClassification | undefined {
  const classification = summaryText(field, "description");
  if (!classification) return undefined;
  const reviewStatus = summaryText(field, "review_status");
  const stars = reviewStars(reviewStatus);
  const lastEvaluated = summaryDate(summaryText(field, "last_evaluated"));
  const conditions = summaryList(field.trait_set)
    .map((trait) => summaryText(summaryObject(trait), "trait_name"))
    .filter(isText);
  return {
    classification,
    ...(reviewStatus ? { reviewStatus } : {}),
    ...(stars === undefined ? {} : { stars }),
    ...(lastEvaluated ? { lastEvaluated } : {}),
    conditions,
  };
}

/**
 * A summary date (`2021/08/30 00:00`) as `YYYY-MM-DD`.
 * @param value the summary's date text
 * @returns the date, or undefined when absent or NCBI's empty placeholder (`1/01/01 00:00`)
 */
export function summaryDate(value: string | undefined): string | undefined {
  const match = /^(\d{4})\/(\d{1,2})\/(\d{1,2})/.exec(value ?? "");
  if (!match) return undefined;
  return `${match[1]}-${match[2]?.padStart(2, "0")}-${match[3]?.padStart(2, "0")}`;
}

/**
 * The summary's `variation_loc` entries as 1-based, inclusive locations, ClinVar's current assembly first.
 * @param placements the `variation_loc` objects (`assembly_name`, `chr`, `start`, `stop`, `status`)
 * @returns one location per assembly that has a name
 */
function summaryLocations(placements: SummaryItem[]): ClinvarLocation[] {
  const current = (loc: SummaryItem) => (summaryText(loc, "status") === "current" ? 0 : 1);
  return [...placements]
    .sort((a, b) => current(a) - current(b))
    .flatMap((loc) => {
      const assembly = summaryText(loc, "assembly_name");
      if (!assembly) return [];
      const location: ClinvarLocation = { assembly };
      const chromosome = summaryText(loc, "chr");
      if (chromosome) location.chromosome = chromosome;
      const start = position(summaryText(loc, "display_start") ?? summaryText(loc, "start"));
      const stop = position(summaryText(loc, "display_stop") ?? summaryText(loc, "stop"));
      if (start !== undefined) location.start1based = start;
      if (stop !== undefined) location.stop1based = stop;
      return [location];
    });
}

function position(text: string | undefined): number | undefined {
  const value = Number(text);
  return text && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

function geneReference(gene: SummaryItem): CrossReference[] {
  const id = summaryText(gene, "geneid") ?? summaryText(gene, "GeneID");
  if (!id || !/^\d+$/.test(id)) return [];
  return [{ identifier: id, identifierType: "ncbi_gene", url: `https://www.ncbi.nlm.nih.gov/gene/${id}` }];
}

function dbsnpReferences(xrefs: SummaryItem[]): CrossReference[] {
  return xrefs.flatMap((xref) => {
    const id = summaryText(xref, "db_id");
    if (summaryText(xref, "db_source") !== "dbSNP" || !id || !/^(?:rs)?\d+$/.test(id)) return [];
    const rs = id.startsWith("rs") ? id : `rs${id}`;
    return [{ identifier: rs, identifierType: "dbsnp", url: `https://www.ncbi.nlm.nih.gov/snp/${rs}` }];
  });
}

function optional(name: string, value: string | undefined): Record<string, string> {
  return value ? { [name]: value } : {};
}

function isText(value: unknown): value is string {
  return typeof value === "string" && value.trim() !== "";
}
