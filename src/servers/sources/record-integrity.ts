/**
 * Integrity flags of literature records: retractions, withdrawals, expressions of concern and errata, with
 * links to the notices, and the record warnings that say so in plain words.
 */

/** What is known to be wrong with, or attached to, a publication. Ordered from most to least serious. */
export type IntegrityStatus =
  | "retracted"
  | "withdrawn"
  | "expression-of-concern"
  | "corrected"
  | "retraction-notice"
  | "concern-notice"
  | "erratum-notice";

/** One linked notice (or, for a notice record, the article it concerns). */
export interface IntegrityNotice {
  /** `retraction`, `expression-of-concern`, `erratum`, or `retracted-article` / `article` for a notice. */
  type: string;
  pmid?: string;
  doi?: string;
  /** The provider's citation text of the linked item (`Nature. 2020;580(7801):E7`). */
  citation?: string;
  /** Where to read it. */
  url?: string;
}

/** The `structuredData.integrity` of a record. */
export interface RecordIntegrity {
  status: IntegrityStatus;
  notices: IntegrityNotice[];
}

const ORDER: readonly IntegrityStatus[] = [
  "retracted",
  "withdrawn",
  "expression-of-concern",
  "corrected",
  "retraction-notice",
  "concern-notice",
  "erratum-notice",
];

/**
 * The most serious of several statuses.
 * @param statuses the statuses found (may be empty)
 * @returns the first in severity order, or undefined when none
 */
export function worstIntegrityStatus(statuses: Iterable<IntegrityStatus>): IntegrityStatus | undefined {
  const found = new Set(statuses);
  return ORDER.find((status) => found.has(status));
}

/**
 * The record warning for an integrity flag, in words a model can repeat to a user.
 * @param integrity the flag
 * @param label the record's label (`PMID:123`)
 * @returns one warning sentence
 */
export function integrityWarning(integrity: RecordIntegrity, label: string): string {
  const links = integrity.notices.map(noticeText).filter(Boolean);
  const where = links.length > 0 ? ` (${links.join("; ")})` : "";
  switch (integrity.status) {
    case "retracted":
      return `RETRACTED: ${label} has been retracted${where}; do not rely on or cite its findings as valid.`;
    case "withdrawn":
      return `WITHDRAWN: ${label} was withdrawn by its authors or publisher${where}; do not rely on its findings.`;
    case "expression-of-concern":
      return `EXPRESSION OF CONCERN: the publisher has raised concerns about ${label}${where}; treat its findings with caution.`;
    case "corrected":
      return `CORRECTED: an erratum to ${label} was published${where}; check the correction before citing.`;
    case "retraction-notice":
      return `${label} is a retraction notice, not research${where}; the article it concerns is retracted.`;
    case "concern-notice":
      return `${label} is an expression of concern, not research${where}.`;
    case "erratum-notice":
      return `${label} is an erratum (correction notice), not research${where}.`;
  }
}

function noticeText(notice: IntegrityNotice): string {
  const id = notice.pmid ? `PMID:${notice.pmid}` : notice.doi ? `doi:${notice.doi}` : notice.citation;
  const name = notice.type.replace(/-/g, " ");
  if (!id && !notice.url) return "";
  return `${name} ${[id, notice.url].filter(Boolean).join(" ")}`;
}
