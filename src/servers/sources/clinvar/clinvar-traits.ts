/**
 * How a ClinVar condition is identified for comparison: the names (of every type, any case) and codes (`db:ID`,
 * normalized across the ways ClinVar and submitters write them) of a submitter's trait and of an RCV's condition
 * set, and ClinVar's current trait mapping of a submission.
 */
import { asArray, asNode, child, type XmlNode, xmlAttr, xmlText } from "../xml-document.js";
import { CLASSIFICATION_ELEMENTS } from "./clinvar-xml.js";

/** The names and identifiers of one trait, normalized for comparison. */
export interface TraitKeys {
  /** Names and symbols of every type (Preferred, Alternate, included), lower-case, spaces collapsed. */
  names: Set<string>;
  /** `db:ID` keys (`omim:613254`, `medgen:C1860707`, `mesh:D015464`, `hp:HP:0100764`). */
  xrefs: Set<string>;
}

/** A trait as a submitter gave it, with ClinVar's current MedGen mapping of it. */
export interface SubmittedTrait extends TraitKeys {
  /** `medgen:C…` keys and MedGen names ClinVar's trait mapping gives this trait. */
  mapped: string[];
}

/** A trait of an RCV's condition set. */
export type RcvTrait = TraitKeys;

/**
 * A submission's own condition traits (its `TraitSet`, not the clinical features it observed), each with
 * ClinVar's mapping of it.
 * @param node the `ClinicalAssertion` element
 * @param mappings ClinVar's trait mapping rows of this submission
 * @returns the traits
 */
export function submittedTraits(node: XmlNode, mappings: XmlNode[]): SubmittedTrait[] {
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

/**
 * The traits of each RCV's condition set, from the record's `ConditionList`s (by `TraitSetID`, or, in older
 * records, by the MedGen concept of its classified condition), with ClinVar's own name and concept of it.
 * @param body the `ClassifiedRecord` element
 * @returns the traits by RCV accession
 */
export function readRcvTraits(body: XmlNode): Map<string, RcvTrait[]> {
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

/**
 * ClinVar's trait mapping rows by the submission (`ClinicalAssertion` ID) they map.
 * @param body the `ClassifiedRecord` element
 * @returns the rows by assertion id
 */
export function traitMappings(body: XmlNode): Map<string, XmlNode[]> {
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
