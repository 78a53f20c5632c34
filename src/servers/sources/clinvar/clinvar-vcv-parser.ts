/** Parses ClinVar VCV documents (EFetch `rettype=vcv`): a variation's classifications and submissions. */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { ProviderError } from "../provider-error.js";
import { buildRecord } from "../record-builder.js";
import type { ProviderAnswer } from "../source-module.js";
import { asArray, asNode, child, type XmlNode, xmlAttr } from "../xml-document.js";
import { type ClinvarClassification, readClassifications } from "./clinvar-classifications.js";
import { placeSubmissions, type RcvPlacement, type UnresolvedSlot } from "./clinvar-conditions.js";
import { clinvarRcvUrl, clinvarVariationUrl, clinvarVersionUrl } from "./clinvar-ids.js";
import { type ClinvarVariantFacts, vcvVariantFacts } from "./clinvar-variant.js";
import {
  type ClinvarSubmission,
  cleanText,
  conditionNames,
  distinct,
  parseClinvarResultSet,
  readSubmission,
  supersededWarnings,
} from "./clinvar-xml.js";

/** One RCV (variation–condition pair) of a VCV record, with its own classifications and submissions. */
export interface ClinvarRcvClassifications {
  accession: string;
  version?: string;
  conditions: string[];
  /** The conditions' MedGen concepts as ClinVar classified them (`C1860707`). */
  conditionIds?: string[];
  /** How many submissions ClinVar counts under this RCV, all classification types together. */
  submissionCount: number;
  /** The SCVs ClinVar counts under this RCV, as far as the record ties them to it. */
  submissions: string[];
  /** Counted submissions the record does not tie to one SCV, with the SCVs they may be. */
  unresolved?: { missing: number; candidates: string[] };
  classifications: ClinvarClassification[];
}

/** A variation's VCV record with everything `get_assertions` reports. */
export interface ClinvarVariationArchive {
  variationId: string;
  /** `VCV000012345`. */
  accession: string;
  version: string | undefined;
  /** `classified` (has classifications) or `included` (only part of other variations). */
  recordType: string | undefined;
  /** ClinVar's `RecordStatus`: `current`, or `previous` for a superseded version. */
  recordStatus: string | undefined;
  classifications: ClinvarClassification[];
  /** Each RCV's classifications (ClinVar's per-condition breakdown). */
  rcvClassifications: ClinvarRcvClassifications[];
  submissions: ClinvarSubmission[];
  /** The record, cited by the page of the version read. */
  record: McpRecord;
}

/**
 * Parses an EFetch `rettype=vcv` answer for one accession.
 * @param answer the XML body, host and status
 * @param rcvMembers the SCVs of some of its RCVs as their RCV records list them, for the submissions the VCV
 *   record alone does not tie to a condition (see `parseClinvarRcvMembers`)
 * @returns the first `VariationArchive` of the answer
 * @throws ProviderError `not_found` for NCBI's empty answer, `upstream_unavailable` when malformed
 */
export function parseClinvarVcv(
  answer: ProviderAnswer,
  rcvMembers?: ReadonlyMap<string, readonly string[]>,
): ClinvarVariationArchive {
  const set = parseClinvarResultSet(answer);
  const archive = asNode(asArray(set?.VariationArchive)[0]);
  if (Object.keys(archive).length === 0)
    throw new ProviderError("not_found", "ClinVar has no such variation record.");
  const variationId = xmlAttr(archive, "VariationID");
  const accession = xmlAttr(archive, "Accession");
  if (!variationId || !accession) {
    throw new ProviderError("upstream_unavailable", `${answer.host} sent a VCV record without accession.`, {
      status: answer.status,
    });
  }
  const version = xmlAttr(archive, "Version");
  const recordStatus = cleanText(archive.RecordStatus);
  // Classified records hold classifications; included records (haplotype parts) only a variant description.
  const body = asNode(archive.ClassifiedRecord ?? archive.IncludedRecord);
  const conditionsByAssertion = mappedConditions(asArray(child(body, "TraitMappingList").TraitMapping));
  const codesOnly = new Set<ClinvarSubmission>();
  const submissions = asArray(child(body, "ClinicalAssertionList").ClinicalAssertion).flatMap((node) => {
    const id = xmlAttr(node, "ID") ?? "";
    const submission = readSubmission(asNode(node), conditionsByAssertion.get(id));
    if (submission && conditionNames(asArray(asNode(node).TraitSet)).length === 0) codesOnly.add(submission);
    return submission ? [submission] : [];
  });
  const placement = placeSubmissions(body, submissions, rcvMembers);
  const classifications = readClassifications(child(body, "Classifications"), [], submissions);
  const allele = alleleOf(body);
  const rcvClassifications = asArray(child(body, "RCVList").RCVAccession).flatMap((rcv) =>
    rcvBreakdown(asNode(rcv), submissions, placement),
  );
  // A submission that named its condition only by a code reads as ClinVar names that condition (the trait
  // mapping's names may include the clinical features it observed, which are not its condition).
  for (const submission of codesOnly) {
    const rcv = rcvClassifications.find((r) => r.accession === submission.rcvAccession);
    if (rcv && rcv.conditions.length > 0) submission.conditions = rcv.conditions;
  }
  const genes = asArray(child(allele, "GeneList").Gene).map(asNode);
  const variant = vcvVariantFacts(allele);
  const recordType = xmlAttr(archive, "RecordType");
  const versioned = version ? `${accession}.${version}` : accession;
  const warnings = [
    ...supersededWarnings(versioned, accession, recordStatus),
    ...complexWarnings(versioned, xmlAttr(archive, "VariationType"), variant),
    ...placementWarnings(placement, rcvClassifications),
  ];
  if (classifications.length === 0) {
    warnings.push(
      recordType === "included"
        ? "This variation is only part of other ClinVar records and has no classification of its own."
        : "ClinVar states no classification for this variation.",
    );
  }
  const record = buildRecord({
    source: "clinvar",
    identifier: accession,
    identifierType: "clinvar_vcv",
    label: `ClinVar:${versioned}`,
    url: clinvarVariationUrl(variationId),
    ...(version ? { citationUrl: clinvarVersionUrl(accession, version), citationVersion: versioned } : {}),
    title: xmlAttr(archive, "VariationName") ?? cleanText(asArray(allele.Name)[0]),
    contentScope: "structured-record",
    crossReferences: [
      ...genes.flatMap(geneReference),
      ...componentGeneReferences(variant, genes),
      ...withRsIds(xrefReferences(asArray(child(allele, "XRefList").XRef)), variant.rsIds),
      ...rcvClassifications.map((rcv) => ({
        identifier: rcv.accession,
        identifierType: "clinvar_rcv",
        url: clinvarRcvUrl(rcv.accession),
      })),
    ],
    structuredData: {
      variationId,
      accession,
      ...(version ? { version } : {}),
      ...(recordStatus ? { recordStatus } : {}),
      ...(recordType ? { recordType } : {}),
      ...textField("variantType", xmlAttr(archive, "VariationType")),
      ...variant,
      classifications,
      rcvClassifications,
      submissionCount: Number(xmlAttr(archive, "NumberOfSubmissions")) || submissions.length,
      ...textField("dateLastUpdated", xmlAttr(archive, "DateLastUpdated")),
    },
    warnings,
  });
  return {
    variationId,
    accession,
    version,
    recordType,
    recordStatus,
    classifications,
    rcvClassifications,
    submissions,
    record,
  };
}

function alleleOf(body: XmlNode): XmlNode {
  // Simple alleles are the common case; haplotypes and genotypes carry their own name and xrefs.
  return asNode(asArray(body.SimpleAllele)[0] ?? asArray(body.Haplotype)[0] ?? asArray(body.Genotype)[0]);
}

function rcvBreakdown(
  rcv: XmlNode,
  submissions: ClinvarSubmission[],
  placement: RcvPlacement,
): ClinvarRcvClassifications[] {
  const accession = xmlAttr(rcv, "Accession");
  if (!accession) return [];
  const version = xmlAttr(rcv, "Version");
  const classified = asArray(child(rcv, "ClassifiedConditionList").ClassifiedCondition);
  const conditions = distinct(classified.map(cleanText));
  const conditionIds = distinct(
    classified.map((c) => (xmlAttr(c, "DB") === "MedGen" ? xmlAttr(c, "ID") : undefined)),
  );
  const placed = new Set(placement.byRcv.get(accession) ?? []);
  const own = submissions.filter((s) => placed.has(s.accession));
  const classifications = readClassifications(child(rcv, "RCVClassifications"), conditions, own);
  const slots = placement.unresolved.filter((slot) => slot.rcv === accession);
  const entry: ClinvarRcvClassifications = {
    accession,
    ...(version ? { version } : {}),
    conditions,
    ...(conditionIds.length > 0 ? { conditionIds } : {}),
    submissionCount: classifications.reduce((sum, c) => sum + countOf(c), 0),
    submissions: own.map((s) => s.accession),
    classifications,
  };
  if (slots.length > 0) entry.unresolved = unresolvedOf(slots);
  return [entry];
}

function countOf(classification: ClinvarClassification): number {
  return classification.descriptions.reduce((sum, d) => sum + (d.submissionCount ?? 0), 0);
}

function unresolvedOf(slots: UnresolvedSlot[]): { missing: number; candidates: string[] } {
  return {
    missing: slots.reduce((sum, slot) => sum + slot.missing, 0),
    candidates: distinct(slots.flatMap((slot) => slot.candidates)),
  };
}

function complexWarnings(
  versioned: string,
  type: string | undefined,
  variant: ClinvarVariantFacts,
): string[] {
  const parts = variant.components ?? [];
  if (parts.length === 0) return [];
  const names = parts
    .map((part) => `${part.name ?? part.variationId ?? "?"}${part.haplotype ? ` in ${part.haplotype}` : ""}`)
    .join("; ");
  // ClinVar writes the type in camel case (`CompoundHeterozygote`).
  const kind = (type ?? "complex variant").replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
  return [
    `${versioned} is a ${kind} of ${parts.length} variants (${names}): its classification is for the ` +
      "combination, not for any of them alone. Genes, bands and rsIDs are those of its variants, its " +
      "locations the span they cover; each variant's own place is in structuredData.components.",
  ];
}

function placementWarnings(placement: RcvPlacement, rcvs: ClinvarRcvClassifications[]): string[] {
  const unresolved = rcvs.filter((rcv) => rcv.unresolved);
  if (unresolved.length === 0) return [];
  const slots = unresolved.map((rcv) => {
    const { missing, candidates } = rcv.unresolved as { missing: number; candidates: string[] };
    const which = candidates.length > 0 ? `one of ${candidates.join(", ")}` : "not in this record";
    return `${rcv.accession} (${rcv.conditions.join("; ") || "no condition"}) lacks ${missing}: ${which}`;
  });
  return [
    `ClinVar counts ${placement.unplaced.length} submission(s) under conditions this record does not tie ` +
      `to them (their submitters named the condition by codes or names the record does not resolve): ` +
      `${slots.join("; ")}. Those conditions' submission lists are incomplete.`,
  ];
}

function mappedConditions(mappings: unknown[]): Map<string, string[]> {
  const byAssertion = new Map<string, string[]>();
  for (const mapping of mappings) {
    const id = xmlAttr(mapping, "ClinicalAssertionID");
    if (!id) continue;
    const names = asArray(asNode(mapping).MedGen).map((medgen) => xmlAttr(medgen, "Name"));
    byAssertion.set(id, distinct([...(byAssertion.get(id) ?? []), ...names]));
  }
  return byAssertion;
}

function geneReference(gene: XmlNode): CrossReference[] {
  const id = xmlAttr(gene, "GeneID");
  if (!id || !/^\d+$/.test(id)) return [];
  return [{ identifier: id, identifierType: "ncbi_gene", url: `https://www.ncbi.nlm.nih.gov/gene/${id}` }];
}

/** The genes of a haplotype's or genotype's variants (its own element lists none). */
function componentGeneReferences(variant: ClinvarVariantFacts, own: XmlNode[]): CrossReference[] {
  if (own.length > 0 || !variant.components) return [];
  return variant.geneIds.flatMap((id) => geneReference({ "@_GeneID": id }));
}

function xrefReferences(xrefs: unknown[]): CrossReference[] {
  return xrefs.flatMap((xref): CrossReference[] => {
    const db = xmlAttr(xref, "DB");
    const id = xmlAttr(xref, "ID");
    if (!db || !id) return [];
    if (db === "dbSNP" && /^\d+$/.test(id)) {
      return [
        { identifier: `rs${id}`, identifierType: "dbsnp", url: `https://www.ncbi.nlm.nih.gov/snp/rs${id}` },
      ];
    }
    // Other databases (ClinGen, OMIM) are named without a link: their hosts are not the source's hosts.
    return [{ identifier: id, identifierType: db.toLowerCase().replace(/[^a-z0-9]+/g, "_") }];
  });
}

/** Adds the rsIDs of a haplotype's or genotype's variants that its own cross-references do not name. */
function withRsIds(references: CrossReference[], rsIds: string[]): CrossReference[] {
  const named = new Set(references.map((x) => x.identifier));
  const more = rsIds
    .filter((rs) => !named.has(rs))
    .map((rs) => ({
      identifier: rs,
      identifierType: "dbsnp",
      url: `https://www.ncbi.nlm.nih.gov/snp/${rs}`,
    }));
  return [...references, ...more];
}

function textField(name: string, value: string | undefined): Record<string, string> {
  return value ? { [name]: value } : {};
}
