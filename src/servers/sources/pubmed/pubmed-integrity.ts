/** Retraction, withdrawal, expression-of-concern and erratum flags of a PubMed record. */
import {
  type IntegrityNotice,
  type IntegrityStatus,
  type RecordIntegrity,
  worstIntegrityStatus,
} from "../record-integrity.js";
import { asArray, asNode, type XmlNode, xmlAttr, xmlText } from "../xml-document.js";
import { pubmedUrl } from "./pubmed-ids.js";

/** CommentsCorrections RefTypes that flag the record, with the status and the linked item's type. */
const REF_TYPES: Record<string, { status: IntegrityStatus; type: string }> = {
  RetractionIn: { status: "retracted", type: "retraction" },
  PartialRetractionIn: { status: "retracted", type: "partial-retraction" },
  ExpressionOfConcernIn: { status: "expression-of-concern", type: "expression-of-concern" },
  ErratumIn: { status: "corrected", type: "erratum" },
  RetractionOf: { status: "retraction-notice", type: "retracted-article" },
  PartialRetractionOf: { status: "retraction-notice", type: "retracted-article" },
  ExpressionOfConcernFor: { status: "concern-notice", type: "article" },
  ErratumFor: { status: "erratum-notice", type: "article" },
};

/** Publication types that flag the record even without a linked notice. */
const TYPE_STATUS: Record<string, IntegrityStatus> = {
  "Retracted Publication": "retracted",
  "Withdrawn Publication": "withdrawn",
  "Retraction of Publication": "retraction-notice",
  "Expression of Concern": "concern-notice",
  "Published Erratum": "erratum-notice",
};

/**
 * The integrity flag of a PubMed article, from its publication types and its CommentsCorrectionsList.
 * @param citation the `MedlineCitation` element (parsed with both comment-correction tags repeating)
 * @param publicationTypes the record's publication types
 * @returns the flag with links to the notices, or undefined when the record is not flagged
 */
export function pubmedIntegrity(citation: XmlNode, publicationTypes: string[]): RecordIntegrity | undefined {
  const statuses: IntegrityStatus[] = publicationTypes.flatMap((type) => TYPE_STATUS[type] ?? []);
  const notices: IntegrityNotice[] = [];
  const entries = asArray(citation.CommentsCorrectionsList).flatMap((list) =>
    asArray(asNode(list).CommentsCorrections),
  );
  for (const entry of entries) {
    const known = REF_TYPES[xmlAttr(entry, "RefType") ?? ""];
    if (!known) continue;
    statuses.push(known.status);
    const node = entry as XmlNode;
    const pmid = xmlText(node.PMID);
    const notice: IntegrityNotice = { type: known.type };
    if (pmid) notice.pmid = pmid;
    const citationText = xmlText(node.RefSource);
    if (citationText) notice.citation = citationText;
    if (pmid) notice.url = pubmedUrl(pmid);
    notices.push(notice);
  }
  const status = worstIntegrityStatus(statuses);
  return status ? { status, notices } : undefined;
}
