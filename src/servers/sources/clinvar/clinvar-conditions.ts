/**
 * Which RCV (variation–condition record) each submission of a VCV document belongs to. ClinVar groups an SCV
 * under the condition its submitter named, resolved to a MedGen concept by identifier (OMIM, MedGen, MeSH, HPO,
 * Orphanet, MONDO) or by any of the concept's names, whatever their case; the VCV document carries the pieces
 * (each RCV's condition set with its names and identifiers, ClinVar's current trait mapping, and how many
 * submissions each RCV counts) but not the answer. The answer is rebuilt here from that evidence, checked
 * against ClinVar's counts, and what the document cannot decide is said, never guessed.
 */
import { asArray, asNode, child, type XmlNode, xmlAttr, xmlText } from "../xml-document.js";
import { CLASSIFICATION_ELEMENTS, type ClassificationType, type ClinvarSubmission } from "./clinvar-xml.js";

/** The names and identifiers of one trait, normalized for comparison. */
interface TraitKeys {
  /** Names and symbols of every type (Preferred, Alternate, included), lower-case, spaces collapsed. */
  names: Set<string>;
  /** `db:ID` keys (`omim:613254`, `medgen:C1860707`, `mesh:D015464`, `hp:HP:0100764`). */
  xrefs: Set<string>;
}

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

/** A trait as a submitter gave it, with ClinVar's current MedGen mapping of it. */
interface SubmittedTrait extends TraitKeys {
  /** `medgen:C…` keys and MedGen names ClinVar's trait mapping gives this trait. */
  mapped: string[];
}

type RcvTrait = TraitKeys;

/** The submission's own condition traits (its `TraitSet`, not the clinical features it observed). */
function submittedTraits(node: XmlNode, mappings: XmlNode[]): SubmittedTrait[] {
  return asArray(node.TraitSet).flatMap((set) =>
    asArray(asNode(set).Trait).map((trait) => {
      const keys = traitKeys(asNode(trait));
      const mapped = mappings.flatMap((mapping) => {
        if (!mappingNames(mapping, asNode(trait))) return [];
        const medgen = child(mapping, "MedGen");
        const cui = xmlAttr(medgen, "CUI");
        const name = xmlAttr(medgen, "Name");
        return [
          ...(cui && /^C[NL]?\d+$/.test(cui) ? [`medgen:${cui}`] : []),
          ...(name ? [normalName(name)] : []),
        ];
      });
      return { ...keys, mapped };
    }),
  );
}

/** Whether a trait mapping row is about this trait (by the name or code it mapped). */
function mappingNames(mapping: XmlNode, trait: XmlNode): boolean {
  const type = xmlAttr(mapping, "MappingType");
  const value = xmlAttr(mapping, "MappingValue") ?? "";
  const ref = xmlAttr(mapping, "MappingRef") ?? "";
  if (type === "XRef") return traitKeys(trait).xrefs.has(xrefKey(ref, value) ?? "");
  return traitKeys(trait).names.has(normalName(value));
}

/** The traits of each RCV's condition set, from the record's `ConditionList`s. */
function readRcvTraits(body: XmlNode): Map<string, RcvTrait[]> {
  const sets = new Map<string, TraitKeys[]>();
  const byMedgen = new Map<string, string>();
  for (const [element] of CLASSIFICATION_ELEMENTS) {
    for (const set of asArray(
      child(child(child(body, "Classifications"), element), "ConditionList").TraitSet,
    )) {
      const id = xmlAttr(set, "ID");
      if (!id || sets.has(id)) continue;
      const traits = asArray(asNode(set).Trait).map((t) => traitKeys(asNode(t)));
      sets.set(id, traits);
      for (const trait of traits)
        for (const x of trait.xrefs) if (x.startsWith("medgen:")) byMedgen.set(x, id);
    }
  }
  const result = new Map<string, RcvTrait[]>();
  for (const rcv of asArray(child(body, "RCVList").RCVAccession)) {
    const accession = xmlAttr(rcv, "Accession");
    if (!accession) continue;
    const list = child(rcv, "ClassifiedConditionList");
    const classified = asArray(list.ClassifiedCondition).map((c) => ({
      name: normalName(xmlText(c)),
      medgen: xmlAttr(c, "DB") === "MedGen" ? xrefKey("MedGen", xmlAttr(c, "ID") ?? "") : undefined,
    }));
    // Older documents name the set only by its MedGen concepts, newer ones by TraitSetID as well.
    const setId =
      xmlAttr(list, "TraitSetID") ?? classified.map((c) => byMedgen.get(c.medgen ?? "")).find(Boolean);
    const traits = (setId ? sets.get(setId) : undefined)?.map(copyKeys) ?? [];
    if (traits.length === 0) {
      for (const c of classified) traits.push({ names: new Set([c.name]), xrefs: new Set() });
    }
    // ClinVar's own name and concept of a one-condition RCV belong to its trait whatever the set says.
    const [only] = traits;
    if (only && traits.length === 1) {
      for (const c of classified) {
        if (c.name) only.names.add(c.name);
        if (c.medgen) only.xrefs.add(c.medgen);
      }
    }
    result.set(accession, traits);
  }
  return result;
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

function traitMappings(body: XmlNode): Map<string, XmlNode[]> {
  const byAssertion = new Map<string, XmlNode[]>();
  for (const mapping of asArray(child(body, "TraitMappingList").TraitMapping)) {
    const id = xmlAttr(mapping, "ClinicalAssertionID");
    if (id) byAssertion.set(id, [...(byAssertion.get(id) ?? []), asNode(mapping)]);
  }
  return byAssertion;
}

/**
 * The names and codes of a `Trait` element: every `ElementValue` of its `Name`s and `Symbol`s, and every
 * `XRef` of the trait and of its names and symbols.
 * @param trait the element
 * @returns the keys, normalized
 */
function traitKeys(trait: XmlNode): TraitKeys {
  const names = new Set<string>();
  const xrefs = new Set<string>();
  for (const holder of [...asArray(trait.Name), ...asArray(trait.Symbol)]) {
    for (const value of asArray(asNode(holder).ElementValue)) {
      const name = normalName(xmlText(value));
      if (name) names.add(name);
    }
    for (const xref of asArray(asNode(holder).XRef)) addXref(xrefs, xref);
  }
  for (const xref of asArray(trait.XRef)) addXref(xrefs, xref);
  return { names, xrefs };
}

function addXref(keys: Set<string>, xref: unknown): void {
  const key = xrefKey(xmlAttr(xref, "DB") ?? "", xmlAttr(xref, "ID") ?? "");
  if (key) keys.add(key);
}

const DATABASES: Record<string, string> = {
  "human phenotype ontology": "hp",
  hpo: "hp",
  hp: "hp",
  "snomed ct": "snomed",
};

/**
 * A comparable key of a condition code, whichever way ClinVar or the submitter wrote it
 * (`Human Phenotype Ontology`/`HP`, `ORPHA29073`/`29073`, `MONDO:0005061`/`0005061`).
 */
function xrefKey(db: string, id: string): string | undefined {
  const name = db.trim().toLowerCase();
  let value = id.trim().toUpperCase();
  if (!name || !value) return undefined;
  const database = DATABASES[name] ?? name;
  if (database === "orphanet") value = value.replace(/^ORPHA(?:NET)?[:_]?/, "");
  if (database === "mondo") value = value.replace(/^MONDO:/, "");
  if (database === "hp" && !value.startsWith("HP:")) value = `HP:${value}`;
  return `${database}:${value}`;
}

function normalName(text: string | undefined): string {
  return (text ?? "").replace(/\s+/g, " ").trim().toLowerCase();
}

function copyKeys(keys: TraitKeys): TraitKeys {
  return { names: new Set(keys.names), xrefs: new Set(keys.xrefs) };
}
