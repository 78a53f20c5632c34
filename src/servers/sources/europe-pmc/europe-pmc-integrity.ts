/** Retraction, withdrawal, expression-of-concern and erratum flags of a Europe PMC hit. */
import {
  type IntegrityNotice,
  type IntegrityStatus,
  type RecordIntegrity,
  worstIntegrityStatus,
} from "../record-integrity.js";
import { europePmcArticleUrl } from "./europe-pmc-ids.js";
import type { EuropePmcHit } from "./europe-pmc-search-parser.js";

/** commentCorrection types (lower case) that flag the hit, with the status and the linked item's type. */
const LINK_TYPES: Record<string, { status: IntegrityStatus; type: string }> = {
  "retraction in": { status: "retracted", type: "retraction" },
  "partial retraction in": { status: "retracted", type: "partial-retraction" },
  "expression of concern in": { status: "expression-of-concern", type: "expression-of-concern" },
  "erratum in": { status: "corrected", type: "erratum" },
  "retraction of": { status: "retraction-notice", type: "retracted-article" },
  "partial retraction of": { status: "retraction-notice", type: "retracted-article" },
  "expression of concern for": { status: "concern-notice", type: "article" },
  "erratum for": { status: "erratum-notice", type: "article" },
};

/** Publication types (lower case) that flag the hit even without a linked notice. */
const TYPE_STATUS: Record<string, IntegrityStatus> = {
  "retracted publication": "retracted",
  "withdrawn publication": "withdrawn",
  "retraction of publication": "retraction-notice",
  "expression of concern": "concern-notice",
  "published erratum": "erratum-notice",
};

/**
 * The integrity flag of a Europe PMC hit, from its publication types and its commentCorrectionList.
 * @param hit the parsed hit
 * @returns the flag with links to the notices (their Europe PMC pages), or undefined when not flagged
 */
export function europePmcIntegrity(hit: EuropePmcHit): RecordIntegrity | undefined {
  const statuses: IntegrityStatus[] = hit.publicationTypes.flatMap(
    (type) => TYPE_STATUS[type.toLowerCase()] ?? [],
  );
  const notices: IntegrityNotice[] = [];
  for (const link of hit.commentCorrections) {
    const known = LINK_TYPES[link.type.toLowerCase()];
    if (!known) continue;
    statuses.push(known.status);
    const notice: IntegrityNotice = { type: known.type };
    if (link.id && (link.source ?? "MED") === "MED") notice.pmid = link.id;
    if (link.reference) notice.citation = link.reference;
    if (link.id && link.source) notice.url = europePmcArticleUrl(link.source, link.id);
    notices.push(notice);
  }
  const status = worstIntegrityStatus(statuses);
  return status ? { status, notices } : undefined;
}
