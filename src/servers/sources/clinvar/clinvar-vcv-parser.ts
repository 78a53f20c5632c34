/** Parses ClinVar VCV documents (EFetch `rettype=vcv`): a variation's classifications and submissions. */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { ProviderError } from "../provider-error.js";
import { buildRecord } from "../record-builder.js";
import type { ProviderAnswer } from "../source-module.js";
import { asArray, asNode, child, type XmlNode, xmlAttr } from "../xml-document.js";
import { type ClinvarClassification, readClassifications } from "./clinvar-classifications.js";
import { clinvarRcvUrl, clinvarVariationUrl } from "./clinvar-ids.js";
import { vcvVariantFacts } from "./clinvar-variant.js";
import {
  type ClinvarSubmission,
  cleanText,
  distinct,
  parseClinvarResultSet,
  readSubmission,
} from "./clinvar-xml.js";

/** One RCV (variation–condition pair) of a VCV record, with its own classifications. */
export interface ClinvarRcvClassifications {
  accession: string;
  version?: string;
  conditions: string[];
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
  classifications: ClinvarClassification[];
  /** Each RCV's classifications (ClinVar's per-condition breakdown). */
  rcvClassifications: ClinvarRcvClassifications[];
  submissions: ClinvarSubmission[];
  /** The record, cited by its VCV page. */
  record: McpRecord;
}

/**
 * Parses an EFetch `rettype=vcv` answer for one accession.
 * @param answer the XML body, host and status
 * @returns the first `VariationArchive` of the answer
 * @throws ProviderError `not_found` for NCBI's empty answer, `upstream_unavailable` when malformed
 */
export function parseClinvarVcv(answer: ProviderAnswer): ClinvarVariationArchive {
  const set = parseClinvarResultSet(answer);
  const archive = asArray(set?.VariationArchive)[0];
  if (!archive) throw new ProviderError("not_found", "ClinVar has no such variation record.");
  const variationId = xmlAttr(archive, "VariationID");
  const accession = xmlAttr(archive, "Accession");
  if (!variationId || !accession) {
    throw new ProviderError("upstream_unavailable", `${answer.host} sent a VCV record without accession.`, {
      status: answer.status,
    });
  }
  const version = xmlAttr(archive, "Version");
  // Classified records hold classifications; included records (haplotype parts) only a variant description.
  const body = asNode(asNode(archive).ClassifiedRecord ?? asNode(archive).IncludedRecord);
  const conditionsByAssertion = mappedConditions(asArray(child(body, "TraitMappingList").TraitMapping));
  const submissions = asArray(child(body, "ClinicalAssertionList").ClinicalAssertion).flatMap((node) => {
    const id = xmlAttr(node, "ID") ?? "";
    const submission = readSubmission(asNode(node), conditionsByAssertion.get(id));
    return submission ? [submission] : [];
  });
  const classifications = readClassifications(child(body, "Classifications"), [], submissions);
  const allele = alleleOf(body);
  const rcvClassifications = asArray(child(body, "RCVList").RCVAccession).flatMap((rcv) =>
    rcvBreakdown(asNode(rcv), submissions),
  );
  const rcvs = rcvClassifications.map((rcv) => rcv.accession);
  const genes = asArray(child(allele, "GeneList").Gene).map(asNode);
  const variant = vcvVariantFacts(allele);
  const recordType = xmlAttr(archive, "RecordType");
  const warnings: string[] = [];
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
    label: `ClinVar:${accession}`,
    url: clinvarVariationUrl(variationId),
    ...(version ? { citationVersion: `${accession}.${version}` } : {}),
    title: xmlAttr(archive, "VariationName") ?? cleanText(asArray(allele.Name)[0]),
    contentScope: "structured-record",
    crossReferences: [
      ...genes.flatMap(geneReference),
      ...xrefReferences(asArray(child(allele, "XRefList").XRef)),
      ...rcvs.map((rcv) => ({ identifier: rcv, identifierType: "clinvar_rcv", url: clinvarRcvUrl(rcv) })),
    ],
    structuredData: {
      variationId,
      accession,
      ...(version ? { version } : {}),
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
    classifications,
    rcvClassifications,
    submissions,
    record,
  };
}

function alleleOf(body: XmlNode): XmlNode {
  // Simple alleles are the common case; haplotypes and genotypes carry their own name and xrefs.
  return asNode(body.SimpleAllele ?? body.Haplotype ?? body.Genotype);
}

function rcvBreakdown(rcv: XmlNode, submissions: ClinvarSubmission[]): ClinvarRcvClassifications[] {
  const accession = xmlAttr(rcv, "Accession");
  if (!accession) return [];
  const version = xmlAttr(rcv, "Version");
  const conditions = distinct(
    asArray(child(rcv, "ClassifiedConditionList").ClassifiedCondition).map(cleanText),
  );
  return [
    {
      accession,
      ...(version ? { version } : {}),
      conditions,
      classifications: readClassifications(
        child(rcv, "RCVClassifications"),
        conditions,
        // Only this RCV's submissions: another condition's SCV may state the same classification.
        submissions.filter(
          (s) =>
            conditions.length === 0 ||
            s.conditions.length === 0 ||
            s.conditions.some((c) => conditions.includes(c)),
        ),
      ),
    },
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

function textField(name: string, value: string | undefined): Record<string, string> {
  return value ? { [name]: value } : {};
}
