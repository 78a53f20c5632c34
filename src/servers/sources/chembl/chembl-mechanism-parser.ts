/** Turns ChEMBL `mechanism` resources (a drug's mechanism of action on a target) into structured records. */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { buildRecord, doiReference } from "../record-builder.js";
import {
  chemblCompoundUrl,
  chemblMechanismApiUrl,
  chemblTargetUrl,
  normalizeChemblId,
} from "./chembl-ids.js";
import {
  type ChemblItem,
  definedEntries,
  isObject,
  numberField,
  objectList,
  textField,
} from "./chembl-page.js";

/**
 * Hosts of reference links that ChEMBL still sends as `http://` and that serve the same page over HTTPS
 * (FDA labels, DailyMed). Links elsewhere keep their identifier and the provider's `refUrl`, without a
 * cross-reference URL.
 */
const HTTPS_REFERENCE_HOSTS = new Set(["www.accessdata.fda.gov", "dailymed.nlm.nih.gov"]);

/** ChEMBL `ref_type` → the cross-reference type of a mechanism reference. */
const REFERENCE_TYPES: Readonly<Record<string, string>> = {
  fda: "fda_label",
  dailymed: "dailymed",
  pubmed: "pmid",
  doi: "doi",
  clinicaltrials: "nct",
};

/**
 * A structured record of one drug mechanism: what the drug does (`mechanism_of_action`, `action_type`) to
 * which target, whether it binds it directly and whether that target carries the clinical efficacy, the
 * highest phase, and the references ChEMBL curated it from (FDA label, DailyMed, PubMed, ...) as links.
 * Mechanisms have no page of their own: the record cites the compound's page, whose "Mechanism of action"
 * section lists them, and keeps the web-service resource as a `chembl.mechanism` cross-reference.
 * @param item one element of a `mechanisms` list
 * @returns the record, or undefined when the item has no integer `mec_id`
 */
export function chemblMechanismRecord(item: ChemblItem): McpRecord | undefined {
  const mechanismId = numberField(item.mec_id);
  if (mechanismId === undefined || !Number.isInteger(mechanismId) || mechanismId < 0) return undefined;
  const id = String(mechanismId);
  const moleculeId = chemblIdOf(item.molecule_chembl_id);
  const parentId = chemblIdOf(item.parent_molecule_chembl_id);
  const targetId = chemblIdOf(item.target_chembl_id);
  const refs = objectList(item.mechanism_refs);
  const crossReferences: CrossReference[] = [];
  if (moleculeId) {
    crossReferences.push({
      identifier: moleculeId,
      identifierType: "chembl.compound",
      url: chemblCompoundUrl(moleculeId),
    });
  }
  if (parentId && parentId !== moleculeId) {
    crossReferences.push({
      identifier: parentId,
      identifierType: "chembl.compound",
      url: chemblCompoundUrl(parentId),
    });
  }
  if (targetId) {
    crossReferences.push({
      identifier: targetId,
      identifierType: "chembl.target",
      url: chemblTargetUrl(targetId),
    });
  }
  for (const ref of refs) {
    const reference = referenceOf(ref);
    if (reference && !crossReferences.some((x) => x.identifier === reference.identifier)) {
      crossReferences.push(reference);
    }
  }
  crossReferences.push({
    identifier: id,
    identifierType: "chembl.mechanism",
    url: chemblMechanismApiUrl(id),
  });
  const directInteraction = flagOf(item.direct_interaction);
  const diseaseEfficacy = flagOf(item.disease_efficacy);
  const warnings: string[] = [];
  if (directInteraction === false) {
    warnings.push(
      "ChEMBL records this mechanism as indirect: the drug is not known to bind this target itself.",
    );
  }
  if (diseaseEfficacy === false) {
    warnings.push("ChEMBL records that this target is not thought to carry the drug's clinical efficacy.");
  }
  const citedId = moleculeId ?? parentId;
  return buildRecord({
    source: "chembl",
    identifier: id,
    identifierType: "chembl.mechanism",
    label: citedId ? `ChEMBL mechanism ${id} (compound ${citedId})` : `ChEMBL mechanism ${id}`,
    url: citedId ? chemblCompoundUrl(citedId) : chemblMechanismApiUrl(id),
    title: textField(item.mechanism_of_action),
    crossReferences,
    contentScope: "structured-record",
    warnings,
    structuredData: definedEntries({
      mechanismOfAction: textField(item.mechanism_of_action),
      actionType: textField(item.action_type),
      moleculeChemblId: moleculeId,
      parentMoleculeChemblId: parentId,
      targetChemblId: targetId,
      directInteraction,
      diseaseEfficacy,
      molecularMechanism: flagOf(item.molecular_mechanism),
      maxPhase: numberField(item.max_phase),
      mechanismComment: textField(item.mechanism_comment),
      selectivityComment: textField(item.selectivity_comment),
      bindingSiteComment: textField(item.binding_site_comment),
      bindingSiteId: numberField(item.site_id),
      variant: variantOf(item.variant_sequence),
      mechanismRefs: refs.map((ref) =>
        definedEntries({
          refType: textField(ref.ref_type),
          refId: textField(ref.ref_id),
          refUrl: textField(ref.ref_url),
        }),
      ),
    }),
  });
}

function chemblIdOf(value: unknown): string | undefined {
  return normalizeChemblId(textField(value) ?? "");
}

/** ChEMBL's 0/1 flags (sometimes booleans) as booleans; anything else is unknown. */
function flagOf(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  const number = numberField(value);
  return number === 1 ? true : number === 0 ? false : undefined;
}

function variantOf(value: unknown): Record<string, unknown> | undefined {
  if (!isObject(value)) return undefined;
  const variant = definedEntries({
    accession: textField(value.accession),
    mutation: textField(value.mutation),
  });
  return Object.keys(variant).length > 0 ? variant : undefined;
}

/** A mechanism reference as a cross-reference: PubMed, DOI and trials by id, labels by their HTTPS link. */
function referenceOf(ref: ChemblItem): CrossReference | undefined {
  const refType = textField(ref.ref_type);
  const refId = textField(ref.ref_id);
  const refUrl = textField(ref.ref_url);
  if (!refType || (!refId && !refUrl)) return undefined;
  const identifierType = REFERENCE_TYPES[refType.toLowerCase()] ?? `reference.${refType.toLowerCase()}`;
  if (identifierType === "pmid" && refId && /^\d{1,9}$/.test(refId)) {
    return { identifier: refId, identifierType, url: `https://pubmed.ncbi.nlm.nih.gov/${refId}/` };
  }
  if (identifierType === "doi" && refId && /^10\.\d{4,9}\/\S+$/.test(refId)) return doiReference(refId);
  if (identifierType === "nct" && refId && /^NCT\d{8}$/i.test(refId)) {
    const nct = refId.toUpperCase();
    return { identifier: nct, identifierType, url: `https://clinicaltrials.gov/study/${nct}` };
  }
  const url = httpsLink(refUrl);
  const identifier = refId ?? refUrl ?? "";
  return url ? { identifier, identifierType, url } : { identifier, identifierType };
}

/** The HTTPS form of a reference URL on a host known to serve it over HTTPS; undefined otherwise. */
function httpsLink(refUrl: string | undefined): string | undefined {
  if (!refUrl) return undefined;
  try {
    const url = new URL(refUrl);
    if (!HTTPS_REFERENCE_HOSTS.has(url.hostname) || (url.protocol !== "http:" && url.protocol !== "https:")) {
      return undefined;
    }
    url.protocol = "https:";
    return url.toString();
  } catch {
    return undefined;
  }
}
