/**
 * Whether a research object may hold a copy of some content, or only reference it by hash: content of a
 * private or controlled source is never copied, nor content under a licence that forbids passing it on.
 */
import type { SourceManifest } from "../governance/manifests/index.js";

/** `public`, `private` or `controlled`, as a manifest declares. */
type DataClassification = SourceManifest["governance"]["dataClassification"];

/** The decision for one piece of content. */
export interface Redistribution {
  /** The crate may hold a copy. */
  allowed: boolean;
  /** Why it may not (shown in the crate as the entity's `conditionsOfAccess`); absent when allowed. */
  reason?: string | undefined;
}

/** Licence wordings that forbid passing the content on (a licence stated in words is matched by these). */
const FORBIDDING: readonly RegExp[] = [
  /all rights reserved/i,
  /\bno (re-?use|redistribution)\b/i,
  /\b(do )?not (be )?re-?distribut/i,
  /\bwithout (prior |written |express )?permission\b/i,
  /\bproprietary\b/i,
  /\bconfidential\b/i,
  // arXiv's default licence grants arXiv alone the right to distribute.
  /arxiv\.org\/licenses\/nonexclusive-distrib/i,
];

/**
 * Decides whether content may be copied into a crate.
 * @param subject the source's data classification (absent: the source is unknown), every licence that
 *   applies (the source's, a record's, a file's; absent ones are ignored), and whether content without
 *   any stated licence stays out (a downloaded paper: copyright applies by default)
 * @returns allowed, or refused with the reason
 * @example
 * redistribution({ dataClassification: "public", licences: ["CC-BY-4.0"] }); // { allowed: true }
 */
export function redistribution(subject: {
  dataClassification: DataClassification | undefined;
  licences: readonly (string | undefined)[];
  sourceId: string;
  requireLicence?: boolean | undefined;
}): Redistribution {
  const { dataClassification, sourceId } = subject;
  if (dataClassification === undefined) {
    return {
      allowed: false,
      reason: `source '${sourceId}' was not in the catalog at export, so its classification and licence are unknown`,
    };
  }
  if (dataClassification !== "public") {
    return {
      allowed: false,
      reason: `source '${sourceId}' is ${dataClassification}: its content is never copied into a research object`,
    };
  }
  for (const licence of subject.licences) {
    if (licence !== undefined && FORBIDDING.some((pattern) => pattern.test(licence))) {
      return { allowed: false, reason: `its licence "${licence}" does not allow redistribution` };
    }
  }
  if (subject.requireLicence === true && subject.licences.every((licence) => !licence)) {
    return { allowed: false, reason: "it states no licence, so copyright applies and it is not passed on" };
  }
  return { allowed: true };
}
