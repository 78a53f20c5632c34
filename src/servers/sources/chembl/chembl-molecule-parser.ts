/** Turns ChEMBL `molecule` resources (from search, similarity or lookup) into structured records. */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { buildRecord } from "../record-builder.js";
import { chemblCompoundUrl, normalizeChemblId } from "./chembl-ids.js";
import {
  type ChemblItem,
  definedEntries,
  isObject,
  numberField,
  objectList,
  textField,
} from "./chembl-page.js";

/** At most this many synonyms per record: drugs can have hundreds of trade names. */
const MAX_SYNONYMS = 10;

/**
 * A structured record of one ChEMBL molecule: names, development phase, properties, structure
 * identifiers and, for search answers, ChEMBL's relevance `score` or Tanimoto `similarity`.
 * @param item one element of a `molecules` list
 * @returns the record, or undefined when the item has no valid `molecule_chembl_id`
 */
export function chemblMoleculeRecord(item: ChemblItem): McpRecord | undefined {
  const id = normalizeChemblId(textField(item.molecule_chembl_id) ?? "");
  if (!id) return undefined;
  const properties = isObject(item.molecule_properties) ? item.molecule_properties : {};
  const structures = isObject(item.molecule_structures) ? item.molecule_structures : {};
  const hierarchy = isObject(item.molecule_hierarchy) ? item.molecule_hierarchy : {};
  const synonyms = synonymsOf(item);
  const formula = textField(properties.full_molformula);
  const parentId = normalizeChemblId(textField(hierarchy.parent_chembl_id) ?? "");
  const inchiKey = textField(structures.standard_inchi_key);
  const chebiId = numberField(item.chebi_par_id);
  const crossReferences: CrossReference[] = [];
  if (parentId && parentId !== id) {
    crossReferences.push({
      identifier: parentId,
      identifierType: "chembl.compound",
      url: chemblCompoundUrl(parentId),
    });
  }
  if (chebiId !== undefined && Number.isInteger(chebiId)) {
    crossReferences.push({
      identifier: `CHEBI:${chebiId}`,
      identifierType: "chebi",
      url: `https://www.ebi.ac.uk/chebi/searchId.do?chebiId=CHEBI:${chebiId}`,
    });
  }
  if (inchiKey) crossReferences.push({ identifier: inchiKey, identifierType: "inchikey" });
  const name = textField(item.pref_name) ?? synonyms[0];
  return buildRecord({
    source: "chembl",
    identifier: id,
    identifierType: "chembl.compound",
    label: id,
    url: chemblCompoundUrl(id),
    // Most research compounds have no name; the formula tells them apart better than a placeholder.
    title: name ?? (formula ? `${id} (${formula})` : undefined),
    crossReferences,
    contentScope: "structured-record",
    structuredData: definedEntries({
      preferredName: textField(item.pref_name),
      synonyms,
      moleculeType: textField(item.molecule_type),
      maxPhase: numberField(item.max_phase),
      firstApproval: numberField(item.first_approval),
      indicationClass: textField(item.indication_class),
      withdrawn: typeof item.withdrawn_flag === "boolean" ? item.withdrawn_flag : undefined,
      parentChemblId: parentId,
      formula,
      molecularWeight: numberField(properties.full_mwt),
      alogp: numberField(properties.alogp),
      hbondAcceptors: numberField(properties.hba),
      hbondDonors: numberField(properties.hbd),
      polarSurfaceArea: numberField(properties.psa),
      rotatableBonds: numberField(properties.rtb),
      ro5Violations: numberField(properties.num_ro5_violations),
      qed: numberField(properties.qed_weighted),
      canonicalSmiles: textField(structures.canonical_smiles),
      standardInchiKey: inchiKey,
      atcClassifications: atcCodesOf(item),
      searchScore: numberField(item.score),
      similarity: numberField(item.similarity),
    }),
  });
}

function synonymsOf(item: ChemblItem): string[] {
  const names = new Map<string, string>();
  for (const synonym of objectList(item.molecule_synonyms)) {
    const name = textField(synonym.molecule_synonym);
    if (name && !names.has(name.toLowerCase())) names.set(name.toLowerCase(), name);
  }
  return [...names.values()].slice(0, MAX_SYNONYMS);
}

function atcCodesOf(item: ChemblItem): string[] | undefined {
  const codes = Array.isArray(item.atc_classifications)
    ? item.atc_classifications.flatMap((code) => textField(code) ?? [])
    : [];
  return codes.length > 0 ? codes : undefined;
}
