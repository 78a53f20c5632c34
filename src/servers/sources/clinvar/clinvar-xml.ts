/**
 * Reading ClinVar's EFetch XML (VCV `VariationArchive` and RCV `ClinVarSet` documents): the result-set
 * wrapper, and the classification and submission elements both documents share.
 */
import type { ProviderAnswer } from "../source-module.js";
import { asArray, asNode, child, parseXml, type XmlNode, xmlAttr, xmlText } from "../xml-document.js";
import { reviewStars } from "./clinvar-review-status.js";

/** Which kind of classification: ClinVar keeps germline, somatic clinical impact and oncogenicity apart. */
export type ClassificationType = "germline" | "somatic_clinical_impact" | "oncogenicity";

/** One submission (SCV) behind a record. */
export interface ClinvarSubmission {
  accession: string;
  version?: string;
  submitter?: string;
  type?: ClassificationType;
  classification?: string;
  /** Somatic clinical impact: the assertion type (`diagnostic`, `prognostic`, `therapeutic`). */
  assertionType?: string;
  /** Somatic clinical impact: the stated significance (`supports diagnosis`, `poor outcome`). */
  significance?: string;
  reviewStatus?: string;
  stars?: number;
  lastEvaluated?: string;
  submitted?: string;
  /**
   * The conditions as the submitter named them (preferred names, else any name it gave, such as an "included"
   * one), else as ClinVar's trait mapping names its codes.
   */
  conditions: string[];
  /** The RCV (variation–condition record) ClinVar counts this submission under, when the record says which. */
  rcvAccession?: string;
  /** Conditions as the submitter coded them (`MeSH:D015464`, `OMIM:608232`), often their only form. */
  conditionCodes: string[];
  /** Allele origins of the observations (`germline`, `somatic`, `de novo`). */
  origins: string[];
  /** Collection methods (`clinical testing`, `literature only`). */
  methods: string[];
  pubmedIds: string[];
}

/** Elements that repeat in VCV and RCV documents. */
const ARRAY_TAGS = [
  "VariationArchive",
  "ClinVarSet",
  "ClinicalAssertion",
  "ClinVarAssertion",
  "RCVAccession",
  "Description",
  "TraitSet",
  "Trait",
  "Name",
  "ElementValue",
  "XRef",
  "Citation",
  "ID",
  "ObservedIn",
  "Method",
  "Gene",
  "TraitMapping",
  "MedGen",
  "SequenceLocation",
  "ProteinChange",
  "ClassifiedCondition",
  "Measure",
  "MeasureRelationship",
  "AttributeSet",
  "Attribute",
  "HGVS",
  "MolecularConsequence",
  "CytogeneticLocation",
  "Symbol",
  "SimpleAllele",
  "Haplotype",
];

/** Classification elements by type (the XML schema ClinVar serves since 2024). */
export const CLASSIFICATION_ELEMENTS: readonly [string, ClassificationType][] = [
  ["GermlineClassification", "germline"],
  ["SomaticClinicalImpact", "somatic_clinical_impact"],
  ["OncogenicityClassification", "oncogenicity"],
];

// NCBI answers an unknown accession with an empty set instead of an error status.
const EMPTY_SET = /^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!DOCTYPE[^>]*>\s*)?<set\s*(?:\/>|>\s*<\/set>)\s*$/i;

/**
 * Parses a ClinVar EFetch answer (`rettype=vcv` or `rettype=clinvarset`).
 * @param answer the XML body, host and status
 * @returns the `ClinVarResult-Set` element, or undefined for NCBI's empty `<set/>` (no such record)
 * @throws ProviderError `upstream_unavailable` when the XML is malformed or has another root
 */
export function parseClinvarResultSet(answer: ProviderAnswer): XmlNode | undefined {
  if (EMPTY_SET.test(answer.text)) return undefined;
  return parseXml(answer, { root: "ClinVarResult-Set", arrayTags: ARRAY_TAGS });
}

/**
 * The text of an element with whitespace collapsed (ClinVar wraps long names over lines).
 * @param node a parsed element
 * @returns the text, or undefined when empty
 */
export function cleanText(node: unknown): string | undefined {
  return xmlText(node)?.replace(/\s+/g, " ");
}

/**
 * Reads one submission (`ClinicalAssertion` of a VCV, `ClinVarAssertion` of an RCV).
 * @param node the submission element
 * @param mappedConditions condition names ClinVar mapped for this submission (VCV `TraitMappingList`)
 * @returns the submission, or undefined when it has no SCV accession
 */
export function readSubmission(
  node: XmlNode,
  mappedConditions: string[] = [],
): ClinvarSubmission | undefined {
  const accessionNode = child(node, "ClinVarAccession");
  const accession = xmlAttr(accessionNode, "Accession") ?? xmlAttr(accessionNode, "Acc");
  if (!accession) return undefined;
  const submissionId = child(node, "ClinVarSubmissionID");
  const classification = child(node, "Classification");
  const submission: ClinvarSubmission = {
    accession,
    conditions: [],
    conditionCodes: [],
    origins: [],
    methods: [],
    pubmedIds: [],
  };
  setText(submission, "version", xmlAttr(accessionNode, "Version"));
  setText(
    submission,
    "submitter",
    xmlAttr(accessionNode, "SubmitterName") ?? xmlAttr(submissionId, "submitter"),
  );
  const stated = statedClassification(classification);
  if (stated) {
    submission.type = stated.type;
    submission.classification = stated.text;
    setText(submission, "assertionType", xmlAttr(stated.node, "ClinicalImpactAssertionType"));
    setText(submission, "significance", xmlAttr(stated.node, "ClinicalImpactClinicalSignificance"));
  }
  const reviewStatus = cleanText(classification.ReviewStatus);
  setText(submission, "reviewStatus", reviewStatus);
  const stars = reviewStars(reviewStatus);
  if (stars !== undefined) submission.stars = stars;
  setText(submission, "lastEvaluated", xmlAttr(classification, "DateLastEvaluated"));
  setText(submission, "submitted", xmlAttr(node, "SubmissionDate") ?? xmlAttr(submissionId, "submitterDate"));
  const named = conditionNames(asArray(node.TraitSet));
  submission.conditionCodes = conditionCodes(asArray(node.TraitSet));
  submission.conditions = named.length > 0 ? named : mappedConditions;
  const observed = asArray(child(node, "ObservedInList").ObservedIn ?? node.ObservedIn);
  submission.origins = distinct(observed.map((o) => cleanText(child(o, "Sample").Origin)));
  submission.methods = distinct(
    observed.flatMap((o) => asArray(asNode(o).Method).map((m) => cleanText(asNode(m).MethodType))),
  );
  submission.pubmedIds = pubmedIdsIn(node);
  return submission;
}

/**
 * Preferred names of the traits of trait sets.
 * @param traitSets `TraitSet` elements
 * @returns distinct preferred trait names, in order
 */
export function preferredNames(traitSets: unknown[]): string[] {
  const names = traitSets.flatMap((set) =>
    asArray(asNode(set).Trait).flatMap((trait) =>
      asArray(asNode(trait).Name).flatMap((name) =>
        asArray(asNode(name).ElementValue)
          .filter((value) => xmlAttr(value, "Type") === "Preferred")
          .map(cleanText),
      ),
    ),
  );
  return distinct(names);
}

/**
 * The names a submitter gave its conditions: the preferred name of each trait, else any other name it gave
 * (OMIM submits some conditions only as an "included" name, such as `LYMPHANGIOLEIOMYOMATOSIS, SOMATIC`).
 * @param traitSets the submission's `TraitSet` elements
 * @returns distinct names, in order
 */
export function conditionNames(traitSets: unknown[]): string[] {
  const names = traitSets.flatMap((set) =>
    asArray(asNode(set).Trait).flatMap((trait) => {
      const values = asArray(asNode(trait).Name).flatMap((name) => asArray(asNode(name).ElementValue));
      const preferred = values.filter((value) => xmlAttr(value, "Type") === "Preferred");
      return (preferred.length > 0 ? preferred : values).map(cleanText);
    }),
  );
  return distinct(names);
}

/**
 * The codes (`DB:ID`) a submitter gave for its conditions: trait-level xrefs of its trait sets.
 * @param traitSets `TraitSet` elements
 * @returns distinct `MeSH:D015464`-style codes, in order
 */
export function conditionCodes(traitSets: unknown[]): string[] {
  return distinct(
    traitSets.flatMap((set) =>
      asArray(asNode(set).Trait).flatMap((trait) =>
        asArray(asNode(trait).XRef).map((xref) => {
          const db = xmlAttr(xref, "DB");
          const id = xmlAttr(xref, "ID");
          return db && id ? `${db}:${id}` : undefined;
        }),
      ),
    ),
  );
}

/**
 * PubMed ids cited anywhere inside an element (`Citation/ID[@Source="PubMed"]`).
 * @param node the element
 * @returns distinct PMIDs, in document order
 */
export function pubmedIdsIn(node: unknown): string[] {
  const found: string[] = [];
  const visit = (value: unknown, inCitation: boolean): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item, inCitation);
      return;
    }
    if (typeof value !== "object" || value === null) return;
    for (const [key, inner] of Object.entries(value as XmlNode)) {
      if (inCitation && key === "ID") {
        for (const id of asArray(inner)) {
          const text = xmlText(id);
          if (xmlAttr(id, "Source") === "PubMed" && text && /^\d+$/.test(text)) found.push(text);
        }
      } else if (!key.startsWith("@_")) {
        visit(inner, inCitation || key === "Citation");
      }
    }
  };
  visit(node, false);
  return distinct(found);
}

/**
 * The warning of a record ClinVar no longer holds current (`RecordStatus` other than `current`): a superseded
 * version reads like the current one unless someone says so.
 * @param versioned the accession and version read (`VCV000012397.1`)
 * @param accession the accession without version
 * @param status the record's `RecordStatus`
 * @returns zero or one warning
 */
export function supersededWarnings(
  versioned: string,
  accession: string,
  status: string | undefined,
): string[] {
  if (!status || status.toLowerCase() === "current") return [];
  return [
    `SUPERSEDED: ${versioned} is not ClinVar's current record (record status "${status}"); its ` +
      `classifications and submissions may have changed since. Look up ${accession} without a version for ` +
      "the current one.",
  ];
}

/**
 * Distinct non-empty strings, in order.
 * @param values strings or undefined
 * @returns the distinct strings
 */
export function distinct(values: readonly (string | undefined)[]): string[] {
  return [...new Set(values.filter(isText))];
}

/** The classification a submission states: its one typed classification element. */
function statedClassification(
  classification: XmlNode,
): { type: ClassificationType; text: string; node: unknown } | undefined {
  for (const [element, type] of CLASSIFICATION_ELEMENTS) {
    const text = cleanText(classification[element]);
    if (text) return { type, text, node: classification[element] };
  }
  return undefined;
}

type SubmissionText =
  | "version"
  | "submitter"
  | "assertionType"
  | "significance"
  | "reviewStatus"
  | "lastEvaluated"
  | "submitted";

function setText(target: ClinvarSubmission, key: SubmissionText, value: string | undefined): void {
  if (value?.trim()) target[key] = value.trim();
}

function isText(value: string | undefined): value is string {
  return typeof value === "string" && value.trim() !== "";
}
