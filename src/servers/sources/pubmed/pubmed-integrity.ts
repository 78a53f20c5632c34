/** Retraction, withdrawal, expression-of-concern and erratum flags of a PubMed record. */
import {
  type IntegrityNotice,
  type IntegrityStatus,
  type RecordIntegrity,
  worstIntegrityStatus,
} from "../record-integrity.js";
import type { PubmedCommentCorrection } from "./pubmed-citation-details.js";

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
 * @param links the citation's comment-correction entries (`pubmedCommentsCorrections`)
 * @param publicationTypes the record's publication types
 * @returns the flag with links to the notices, or undefined when the record is not flagged
 */
export function pubmedIntegrity(
  links: readonly PubmedCommentCorrection[],
  publicationTypes: string[],
): RecordIntegrity | undefined {
  const statuses: IntegrityStatus[] = publicationTypes.flatMap((type) => TYPE_STATUS[type] ?? []);
  const notices: IntegrityNotice[] = [];
  for (const link of links) {
    const known = REF_TYPES[link.type];
    if (!known) continue;
    statuses.push(known.status);
    const notice: IntegrityNotice = { type: known.type };
    if (link.pmid) notice.pmid = link.pmid;
    if (link.citation) notice.citation = link.citation;
    if (link.url) notice.url = link.url;
    notices.push(notice);
  }
  const status = worstIntegrityStatus(statuses);
  return status ? { status, notices } : undefined;
}
