/** ClinVar review statuses and the 0–4 "gold stars" ClinVar shows for them. */

/**
 * ClinVar's star rating of each review status (https://www.ncbi.nlm.nih.gov/clinvar/docs/review_status/),
 * for aggregate (VCV/RCV) and submitted (SCV) classifications, germline, somatic and oncogenicity alike.
 * Older wordings ("conflicting interpretations", "no assertion provided") are kept for archived answers.
 */
const STARS: Readonly<Record<string, number>> = {
  "practice guideline": 4,
  "reviewed by expert panel": 3,
  "criteria provided, multiple submitters, no conflicts": 2,
  "criteria provided, multiple submitters": 2,
  "criteria provided, conflicting classifications": 1,
  "criteria provided, conflicting interpretations": 1,
  "criteria provided, single submitter": 1,
  "no assertion criteria provided": 0,
  "no classification provided": 0,
  "no assertion provided": 0,
  "no classification for the single variant": 0,
  "no classification for the individual variant": 0,
  "no classifications from unflagged records": 0,
  "no interpretation for the single variant": 0,
  "flagged submission": 0,
};

/**
 * The stars of a review status.
 * @param reviewStatus ClinVar's review status text (case and spacing are ignored)
 * @returns 0–4, or undefined for an unknown or absent status
 */
export function reviewStars(reviewStatus: string | undefined): number | undefined {
  if (!reviewStatus) return undefined;
  return STARS[reviewStatus.trim().toLowerCase().replace(/\s+/g, " ")];
}
