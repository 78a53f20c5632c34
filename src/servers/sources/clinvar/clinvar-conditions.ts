/**
 * Which RCV (variation–condition record) each submission of a VCV document belongs to. ClinVar groups an SCV
 * under the condition its submitter named, resolved to a MedGen concept by identifier (OMIM, MedGen, MeSH, HPO,
 * Orphanet, MONDO) or by any of the concept's names, whatever their case; the VCV document carries the pieces
 * (each RCV's condition set with its names and identifiers, ClinVar's current trait mapping, and how many
 * submissions each RCV counts) but not the answer. The answer is rebuilt here from that evidence, checked
 * against ClinVar's counts, and what the document cannot decide is said, never guessed.
 */
import { asArray, asNode, child, type XmlNode, xmlAttr, xmlText } from "../xml-document.js";
import {
  type RcvTrait,
  readRcvTraits,
  type SubmittedTrait,
  submittedTraits,
  traitMappings,
} from "./clinvar-traits.js";
import { CLASSIFICATION_ELEMENTS, type ClassificationType, type ClinvarSubmission } from "./clinvar-xml.js";

/** One condition slot ClinVar counts: one classification type of one RCV. */
interface Slot {
  rcv: string;
  type: ClassificationType;
  /** ClinVar's `SubmissionCount`, summed over the type's descriptions. */
  capacity: number;
  /** The aggregate's descriptions (`Pathogenic/Likely pathogenic`, `Tier I - Strong`). */
  descriptions: string[];
  /** The aggregate's date last evaluated (`YYYY-MM-DD`), the latest of its descriptions. */
  lastEvaluated: string | undefined;
  placed: ClinvarSubmission[];
}

/** A condition slot ClinVar counts submissions under that the document does not tie to particular SCVs. */
export interface UnresolvedSlot {
  rcv: string;
  type: ClassificationType;
  /** How many submissions ClinVar counts there that are not placed. */
  missing: number;
  /** The unplaced SCVs that could be those, by classification and date. */
  candidates: string[];
}

/** Where each submission of a VCV belongs. */
export interface RcvPlacement {
  /** SCV accessions by RCV accession, in document order. */
  byRcv: Map<string, string[]>;
  /** Slots with fewer placed submissions than ClinVar counts. */
  unresolved: UnresolvedSlot[];
  /** Submissions placed under no RCV. */
  unplaced: string[];
}

/** How strongly a submitted condition points at an RCV's condition. */
enum Evidence {
  None = 0,
  /** ClinVar's current trait mapping, or a name whose submitter's own codes point elsewhere. */
  Weak = 1,
  /** A name (or symbol), with no code from the submitter. */
  Name = 2,
  /** A code the submitter gave (OMIM, MedGen, MeSH, HPO, Orphanet, MONDO). */
  Code = 3,
}

/**
 * Places each submission of a VCV `ClassifiedRecord` under its RCV.
 * @param body the `ClassifiedRecord` (or `IncludedRecord`) element
 * @param submissions the submissions, read from the same element's `ClinicalAssertionList`
 * @param known SCV accessions by RCV accession, as RCV records list them (authoritative where given)
 * @returns the placement; each placed submission also gets `rcvAccession`
 */
export function placeSubmissions(
  body: XmlNode,
  submissions: ClinvarSubmission[],
  known: ReadonlyMap<string, readonly string[]> = new Map(),
): RcvPlacement {
  const slots = readSlots(body);
  for (const slot of slots) {
    const listed = new Set(known.get(slot.rcv) ?? []);
    place(
      slot,
      submissions.filter(
        (s) => s.type === slot.type && s.rcvAccession === undefined && listed.has(s.accession),
      ),
    );
  }
  const rcvTraits = readRcvTraits(body);
  const mapped = traitMappings(body);
  const assertions = new Map<string, XmlNode>();
  for (const node of asArray(child(body, "ClinicalAssertionList").ClinicalAssertion)) {
    const accession = xmlAttr(child(node, "ClinVarAccession"), "Accession");
    if (accession) assertions.set(accession, asNode(node));
  }
  // Each submission's evidence for each slot of its own classification type.
  const evidence = new Map<ClinvarSubmission, Map<Slot, Evidence>>();
  for (const submission of submissions) {
    const node = assertions.get(submission.accession);
    const traits = node ? submittedTraits(node, mapped.get(xmlAttr(node, "ID") ?? "") ?? []) : [];
    const levels = new Map<Slot, Evidence>();
    for (const slot of slots) {
      if (slot.type !== submission.type) continue;
      const level = setEvidence(traits, rcvTraits.get(slot.rcv) ?? []);
      if (level > Evidence.None) levels.set(slot, level);
    }
    evidence.set(submission, levels);
  }
  let open = submissions.filter((s) => s.type !== undefined && s.rcvAccession === undefined);
  // The strongest evidence first; a slot that more submissions claim than ClinVar counts takes none of them.
  for (const level of [Evidence.Code, Evidence.Name, Evidence.Weak]) {
    const claims = new Map<Slot, ClinvarSubmission[]>();
    for (const submission of open) {
      const best = bestSlots(evidence.get(submission));
      const [slot] = best.slots;
      if (best.level === level && best.slots.length === 1 && slot) {
        claims.set(slot, [...(claims.get(slot) ?? []), submission]);
      }
    }
    for (const [slot, claimed] of claims) {
      if (claimed.length <= slot.capacity - slot.placed.length) place(slot, claimed);
    }
    open = open.filter((s) => s.rcvAccession === undefined);
  }
  const candidates = new Map<ClinvarSubmission, Slot[]>();
  eliminate(slots, open, submissions, evidence, candidates);
  const byRcv = new Map<string, string[]>();
  for (const submission of submissions) {
    if (submission.rcvAccession === undefined) continue;
    byRcv.set(submission.rcvAccession, [...(byRcv.get(submission.rcvAccession) ?? []), submission.accession]);
  }
  const unplaced = submissions.filter((s) => s.rcvAccession === undefined);
  const unresolved = slots
    .filter((slot) => slot.placed.length < slot.capacity)
    .map((slot) => ({
      rcv: slot.rcv,
      type: slot.type,
      missing: slot.capacity - slot.placed.length,
      candidates: unplaced.filter((s) => candidates.get(s)?.includes(slot)).map((s) => s.accession),
    }));
  return { byRcv, unresolved, unplaced: unplaced.map((s) => s.accession) };
}

/**
 * Places what ClinVar's counts leave no choice about. Every submission of a type sits under exactly one RCV,
 * so when a type's counts add up to its submissions, a submission that fits one open slot belongs there, and a
 * slot that exactly as many open submissions fit as it lacks takes them all.
 */
function eliminate(
  slots: Slot[],
  open: ClinvarSubmission[],
  all: ClinvarSubmission[],
  evidence: Map<ClinvarSubmission, Map<Slot, Evidence>>,
  candidates: Map<ClinvarSubmission, Slot[]>,
): void {
  let changed = true;
  while (changed) {
    changed = false;
    open = open.filter((s) => s.rcvAccession === undefined);
    for (const submission of open) {
      const fitting = slots.filter((slot) => slot.type === submission.type && fits(submission, slot));
      // Where the submission names a condition, only the slots it names are candidates, if any still fit.
      const named = fitting.filter((slot) => (evidence.get(submission)?.get(slot) ?? Evidence.None) > 0);
      candidates.set(submission, named.length > 0 ? named : fitting);
    }
    for (const submission of open) {
      const [only, ...others] = candidates.get(submission) ?? [];
      if (only && others.length === 0 && countsAddUp(slots, all, only.type)) {
        place(only, [submission]);
        changed = true;
        break;
      }
    }
    if (changed) continue;
    for (const slot of slots) {
      const missing = slot.capacity - slot.placed.length;
      const fitting = open.filter((s) => candidates.get(s)?.includes(slot));
      if (missing > 0 && fitting.length === missing && countsAddUp(slots, all, slot.type)) {
        place(slot, fitting);
        changed = true;
        break;
      }
    }
  }
}

function countsAddUp(slots: Slot[], all: ClinvarSubmission[], type: ClassificationType): boolean {
  const capacity = slots.filter((s) => s.type === type).reduce((sum, s) => sum + s.capacity, 0);
  return capacity === all.filter((s) => s.type === type).length;
}

function place(slot: Slot, submissions: ClinvarSubmission[]): void {
  for (const submission of submissions) {
    submission.rcvAccession = slot.rcv;
    slot.placed.push(submission);
  }
}

/**
 * Whether a submission can be one of those ClinVar counts under a slot that still lacks some: its
 * classification must be one the aggregate is made of, and its date no later than the aggregate's (the last
 * one to fill a slot must carry the aggregate's date when no placed one does).
 */
function fits(submission: ClinvarSubmission, slot: Slot): boolean {
  const missing = slot.capacity - slot.placed.length;
  if (missing <= 0) return false;
  const classified = slot.placed.filter((s) => !unclassified(s));
  if (unclassified(submission)) {
    // A submission without a classification cannot make an aggregate that has one.
    return classified.length > 0 || missing > 1 || slot.descriptions.every(isNotProvided);
  }
  if (!slot.descriptions.some((d) => isPartOf(submission, d, slot.type))) return false;
  const date = submission.lastEvaluated;
  if (slot.lastEvaluated && date && date > slot.lastEvaluated) return false;
  const reached = classified.some((s) => s.lastEvaluated === slot.lastEvaluated);
  return !(slot.lastEvaluated && missing === 1 && !reached && date !== slot.lastEvaluated);
}

function unclassified(submission: ClinvarSubmission): boolean {
  return isNotProvided(submission.classification ?? "not provided");
}

function isNotProvided(text: string): boolean {
  return /^(?:not provided|no classification)/i.test(text.trim());
}

/** `Pathogenic/Likely pathogenic` is made of `Pathogenic` and `Likely pathogenic`; a conflict of anything. */
function isPartOf(submission: ClinvarSubmission, description: string, type: ClassificationType): boolean {
  const stated = (submission.classification ?? "").toLowerCase();
  const aggregate = description.toLowerCase();
  if (type === "germline" && aggregate.startsWith("conflicting")) return true;
  return aggregate === stated || aggregate.split(/\s*(?:\/|;|,)\s*/).includes(stated);
}

function bestSlots(levels: Map<Slot, Evidence> | undefined): { level: Evidence; slots: Slot[] } {
  let level = Evidence.None;
  let slots: Slot[] = [];
  for (const [slot, value] of levels ?? []) {
    if (value > level) {
      level = value;
      slots = [slot];
    } else if (value === level) {
      slots.push(slot);
    }
  }
  return { level, slots };
}

/** The evidence that a submission's condition set is an RCV's: every trait must match, and as many. */
function setEvidence(submitted: SubmittedTrait[], rcv: RcvTrait[]): Evidence {
  if (submitted.length === 0 || submitted.length !== rcv.length) return Evidence.None;
  let weakest = Evidence.Code;
  for (const trait of submitted) {
    const best = Math.max(...rcv.map((r) => traitEvidence(trait, r))) as Evidence;
    if (best < weakest) weakest = best;
  }
  return weakest;
}

function traitEvidence(trait: SubmittedTrait, rcv: RcvTrait): Evidence {
  if ([...trait.xrefs].some((x) => rcv.xrefs.has(x))) return Evidence.Code;
  const named = [...trait.names].some((n) => rcv.names.has(n));
  if (named) return trait.xrefs.size === 0 ? Evidence.Name : Evidence.Weak;
  if (trait.mapped.some((m) => rcv.xrefs.has(m) || rcv.names.has(m))) return Evidence.Weak;
  return Evidence.None;
}

function readSlots(body: XmlNode): Slot[] {
  return asArray(child(body, "RCVList").RCVAccession).flatMap((rcv) => {
    const accession = xmlAttr(rcv, "Accession");
    if (!accession) return [];
    const classifications = child(rcv, "RCVClassifications");
    return CLASSIFICATION_ELEMENTS.flatMap(([element, type]): Slot[] => {
      const node = classifications[element];
      if (node === undefined) return [];
      const descriptions = asArray(asNode(node).Description);
      const capacity = descriptions.reduce<number>(
        (sum, d) => sum + (Number(xmlAttr(d, "SubmissionCount")) || 0),
        0,
      );
      const dates = descriptions.flatMap((d) => xmlAttr(d, "DateLastEvaluated") ?? []).sort();
      return [
        {
          rcv: accession,
          type,
          capacity,
          descriptions: descriptions.flatMap((d) => xmlText(d) ?? []),
          lastEvaluated: dates.at(-1),
          placed: [],
        },
      ];
    });
  });
}
