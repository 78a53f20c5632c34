/**
 * ClinVar's aggregate classifications (VCV record, RCV reference assertion, VCV `RCVClassifications`), each
 * kept with its own evidence: one entry per description, with the review status of the submissions that state it.
 */
import { asArray, asNode, child, type XmlNode, xmlAttr } from "../xml-document.js";
import { reviewStars } from "./clinvar-review-status.js";
import {
  CLASSIFICATION_ELEMENTS,
  type ClassificationType,
  type ClinvarSubmission,
  cleanText,
  distinct,
  preferredNames,
} from "./clinvar-xml.js";

/**
 * One description of an aggregate classification. ClinVar lists several for somatic clinical impact (one per
 * tier and assertion type) under one review status; each entry here carries its own.
 */
export interface ClinvarClassificationDescription {
  /** `Tier I - Strong`, `Pathogenic`. */
  description: string;
  /** Somatic clinical impact: `diagnostic`, `prognostic`, `therapeutic`. */
  assertionType?: string;
  /** Somatic clinical impact: `supports diagnosis`, `poor outcome`. */
  clinicalSignificance?: string;
  submissionCount?: number;
  /** `YYYY-MM-DD`. */
  lastEvaluated?: string;
  /**
   * The review status of this description: that of the submissions stating it (the best, when several do),
   * or the aggregate's when the classification has this one description.
   */
  reviewStatus?: string;
  stars?: number;
  /**
   * The SCVs behind this description, when the submissions are in the same document: for a germline or
   * oncogenicity aggregate every submission of its type (ClinVar's count includes "not provided" ones), for a
   * somatic tier those stating it.
   */
  submissions?: string[];
}

/** One classification type's aggregate (of a VCV or RCV record). */
export interface ClinvarClassification {
  type: ClassificationType;
  /** ClinVar's text (`Pathogenic`; several somatic tiers joined with `; `). */
  classification: string;
  /** ClinVar's aggregate review status: for several descriptions, that of the best-reviewed one. */
  reviewStatus?: string;
  /** ClinVar's 0–4 stars for the aggregate review status. */
  stars?: number;
  /** `YYYY-MM-DD`; for several descriptions, the latest. */
  lastEvaluated?: string;
  submissionCount?: number;
  submitterCount?: number;
  /** Conflicts: ClinVar's count per submitted classification (`Pathogenic(1); Uncertain significance(1)`). */
  explanation?: string;
  /** The explanation, parsed. */
  breakdown?: { classification: string; submissionCount: number }[];
  /** Each description with its own assertion type, date, count and review status. */
  descriptions: ClinvarClassificationDescription[];
  conditions: string[];
}

/**
 * The aggregate classifications of a `Classifications` (or `RCVClassifications`) element.
 * @param classifications the element
 * @param fallbackConditions conditions to report when the classification lists none
 * @param submissions the document's submissions, to give each description its own review status
 * @returns one entry per classification type present
 */
export function readClassifications(
  classifications: XmlNode,
  fallbackConditions: string[] = [],
  submissions: readonly ClinvarSubmission[] = [],
): ClinvarClassification[] {
  const found: ClinvarClassification[] = [];
  for (const [element, type] of CLASSIFICATION_ELEMENTS) {
    const node = classifications[element];
    if (node === undefined) continue;
    const reviewStatus = cleanText(asNode(node).ReviewStatus);
    const descriptions = asArray(asNode(node).Description).flatMap((d) => describe(d, type, submissions));
    const [only, ...others] = descriptions;
    if (only && others.length === 0 && type !== "somatic_clinical_impact") {
      // A germline or oncogenicity aggregate (Pathogenic/Likely pathogenic, a conflict) is computed over every
      // submission of its type, "not provided" ones included in ClinVar's count: they are all its submissions.
      const ofType = submissions.filter((s) => s.type === type).map((s) => s.accession);
      if (ofType.length > 0) only.submissions = ofType;
      else delete only.submissions;
    }
    if (only && others.length === 0 && reviewStatus) {
      // One description: the aggregate's review status is its own (several SCVs may raise it above each one's).
      only.reviewStatus = reviewStatus;
      const aggregateStars = reviewStars(reviewStatus);
      if (aggregateStars === undefined) delete only.stars;
      else only.stars = aggregateStars;
    }
    const texts = distinct(descriptions.map((d) => d.description));
    if (texts.length === 0) continue;
    const stars = reviewStars(reviewStatus);
    const lastEvaluated =
      xmlAttr(node, "DateLastEvaluated") ??
      distinct(descriptions.map((d) => d.lastEvaluated))
        .sort()
        .at(-1);
    const count = Number(xmlAttr(node, "NumberOfSubmissions"));
    const submitters = Number(xmlAttr(node, "NumberOfSubmitters"));
    const explanation = cleanText(asNode(node).Explanation);
    const conditions = preferredNames(asArray(child(node, "ConditionList").TraitSet));
    found.push({
      type,
      classification: texts.join("; "),
      ...(reviewStatus ? { reviewStatus } : {}),
      ...(stars === undefined ? {} : { stars }),
      ...(lastEvaluated ? { lastEvaluated } : {}),
      ...(Number.isInteger(count) && count > 0 ? { submissionCount: count } : {}),
      ...(Number.isInteger(submitters) && submitters > 0 ? { submitterCount: submitters } : {}),
      ...(explanation ? { explanation, breakdown: breakdownOf(explanation) } : {}),
      descriptions,
      conditions: conditions.length > 0 ? conditions : fallbackConditions,
    });
  }
  return found;
}

function describe(
  node: unknown,
  type: ClassificationType,
  submissions: readonly ClinvarSubmission[],
): ClinvarClassificationDescription[] {
  const description = cleanText(node);
  if (!description) return [];
  const entry: ClinvarClassificationDescription = { description };
  const assertionType = xmlAttr(node, "ClinicalImpactAssertionType");
  const significance = xmlAttr(node, "ClinicalImpactClinicalSignificance");
  const count = Number(xmlAttr(node, "SubmissionCount"));
  const date = xmlAttr(node, "DateLastEvaluated");
  if (assertionType) entry.assertionType = assertionType;
  if (significance) entry.clinicalSignificance = significance;
  if (Number.isInteger(count) && count > 0) entry.submissionCount = count;
  if (date) entry.lastEvaluated = date;
  const stating = submissions.filter(
    (s) =>
      s.type === type &&
      s.classification === description &&
      (assertionType === undefined || s.assertionType === assertionType),
  );
  const best = [...stating].sort((a, b) => (b.stars ?? -1) - (a.stars ?? -1))[0];
  if (best?.reviewStatus) {
    entry.reviewStatus = best.reviewStatus;
    if (best.stars !== undefined) entry.stars = best.stars;
  }
  if (stating.length > 0) entry.submissions = stating.map((s) => s.accession);
  return [entry];
}

/** `Pathogenic(18); Likely pathogenic(9)` (ClinVar also writes `Pathogenic(1);Uncertain significance(1)`). */
function breakdownOf(explanation: string): { classification: string; submissionCount: number }[] {
  return explanation.split(";").flatMap((part) => {
    const match = /^\s*(.+?)\s*\((\d+)\)\s*$/.exec(part);
    return match?.[1] && match[2] ? [{ classification: match[1], submissionCount: Number(match[2]) }] : [];
  });
}
