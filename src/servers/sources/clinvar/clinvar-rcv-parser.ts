/** Parses ClinVar RCV documents (EFetch `rettype=clinvarset`): one variation–condition record. */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { ProviderError } from "../provider-error.js";
import { buildRecord } from "../record-builder.js";
import type { ProviderAnswer } from "../source-module.js";
import { asArray, asNode, child, xmlAttr } from "../xml-document.js";
import { type ClinvarClassification, readClassifications } from "./clinvar-classifications.js";
import { clinvarRcvUrl, clinvarVariationUrl, clinvarVersionUrl, variationIdOf } from "./clinvar-ids.js";
import { rcvVariantFacts } from "./clinvar-variant.js";
import {
  type ClinvarSubmission,
  cleanText,
  conditionCodes,
  parseClinvarResultSet,
  preferredNames,
  readSubmission,
  supersededWarnings,
} from "./clinvar-xml.js";

/** An RCV record with its classifications and submissions. */
export interface ClinvarRcvSet {
  /** `RCV000012345`. */
  accession: string;
  version: string | undefined;
  /** The variation the RCV is about, when the document names it. */
  variationId: string | undefined;
  classifications: ClinvarClassification[];
  submissions: ClinvarSubmission[];
  /** The record, cited by its RCV page. */
  record: McpRecord;
}

/**
 * Parses an EFetch `rettype=clinvarset` answer for one RCV accession.
 * @param answer the XML body, host and status
 * @returns the first `ClinVarSet` of the answer
 * @throws ProviderError `not_found` for NCBI's empty answer, `upstream_unavailable` when malformed
 */
export function parseClinvarRcv(answer: ProviderAnswer): ClinvarRcvSet {
  const set = asArray(parseClinvarResultSet(answer)?.ClinVarSet)[0];
  if (set === undefined) throw new ProviderError("not_found", "ClinVar has no such RCV record.");
  const reference = child(set, "ReferenceClinVarAssertion");
  const accessionNode = child(reference, "ClinVarAccession");
  const accession = xmlAttr(accessionNode, "Acc");
  if (!accession) {
    throw new ProviderError("upstream_unavailable", `${answer.host} sent an RCV record without accession.`, {
      status: answer.status,
    });
  }
  const version = xmlAttr(accessionNode, "Version");
  const conditions = preferredNames(asArray(reference.TraitSet));
  // Submitters often name a condition only by a code the reference trait also carries (MeSH, OMIM).
  const referenceCodes = conditionCodes(asArray(reference.TraitSet));
  const submissions = asArray(asNode(set).ClinVarAssertion).flatMap((node) => {
    const submission = readSubmission(asNode(node));
    if (
      submission?.conditions.length === 0 &&
      submission.conditionCodes.some((c) => referenceCodes.includes(c))
    ) {
      submission.conditions = conditions;
    }
    return submission ? [submission] : [];
  });
  const classifications = readClassifications(child(reference, "Classifications"), conditions, submissions);
  const measureSet = child(reference, "MeasureSet");
  const variant = rcvVariantFacts(measureSet);
  const vcv = xmlAttr(measureSet, "Acc");
  const variationId = xmlAttr(measureSet, "ID") ?? (vcv ? variationIdOf(vcv) : undefined);
  const crossReferences: CrossReference[] = [];
  if (variationId && /^\d+$/.test(variationId)) {
    crossReferences.push({
      identifier: vcv ?? variationId,
      identifierType: vcv ? "clinvar_vcv" : "clinvar_variation_id",
      url: clinvarVariationUrl(variationId),
    });
  }
  crossReferences.push(
    ...variant.geneIds
      .filter((id) => /^\d+$/.test(id))
      .map((id) => ({
        identifier: id,
        identifierType: "ncbi_gene",
        url: `https://www.ncbi.nlm.nih.gov/gene/${id}`,
      })),
    ...variant.rsIds.map((rs) => ({
      identifier: rs,
      identifierType: "dbsnp",
      url: `https://www.ncbi.nlm.nih.gov/snp/${rs}`,
    })),
    ...medgenReferences(asArray(reference.TraitSet)),
  );
  const recordStatus = cleanText(reference.RecordStatus) ?? cleanText(asNode(set).RecordStatus);
  const versioned = version ? `${accession}.${version}` : accession;
  const warnings = supersededWarnings(versioned, accession, recordStatus);
  if (classifications.length === 0) warnings.push("ClinVar states no classification for this record.");
  const record = buildRecord({
    source: "clinvar",
    identifier: accession,
    identifierType: "clinvar_rcv",
    label: `ClinVar:${versioned}`,
    url: clinvarRcvUrl(accession),
    ...(version ? { citationUrl: clinvarVersionUrl(accession, version), citationVersion: versioned } : {}),
    title: cleanText(asNode(set).Title),
    contentScope: "structured-record",
    crossReferences,
    structuredData: {
      accession,
      ...(version ? { version } : {}),
      ...(variationId ? { variationId } : {}),
      ...(vcv ? { variationAccession: vcv } : {}),
      ...variant,
      conditions,
      classifications,
      submissionCount: submissions.length,
      ...(recordStatus ? { recordStatus } : {}),
    },
    warnings,
  });
  return { accession, version, variationId, classifications, submissions, record };
}

/**
 * The SCVs of each RCV of an EFetch `rettype=clinvarset` answer for several RCV accessions: which
 * submissions ClinVar counts under each condition, as the RCV records themselves list them.
 * @param answer the XML body, host and status
 * @returns SCV accessions by RCV accession (NCBI's empty answer gives an empty map)
 * @throws ProviderError `upstream_unavailable` when malformed
 */
export function parseClinvarRcvMembers(answer: ProviderAnswer): Map<string, string[]> {
  const members = new Map<string, string[]>();
  for (const set of asArray(parseClinvarResultSet(answer)?.ClinVarSet)) {
    const rcv = xmlAttr(child(child(set, "ReferenceClinVarAssertion"), "ClinVarAccession"), "Acc");
    if (!rcv) continue;
    const scvs = asArray(asNode(set).ClinVarAssertion).flatMap(
      (node) => xmlAttr(child(node, "ClinVarAccession"), "Acc") ?? [],
    );
    members.set(rcv, scvs);
  }
  return members;
}

function medgenReferences(traitSets: unknown[]): CrossReference[] {
  const ids = new Set<string>();
  for (const set of traitSets) {
    for (const trait of asArray(asNode(set).Trait)) {
      for (const xref of asArray(asNode(trait).XRef)) {
        const id = xmlAttr(xref, "ID");
        if (xmlAttr(xref, "DB") === "MedGen" && id && /^C[NL]?\d+$/.test(id)) ids.add(id);
      }
    }
  }
  return [...ids].map((id) => ({
    identifier: id,
    identifierType: "medgen",
    url: `https://www.ncbi.nlm.nih.gov/medgen/${id}`,
  }));
}
