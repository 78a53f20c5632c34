/** Turns ChEMBL `activity` resources (one measured value of a compound in an assay) into structured records. */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { buildRecord } from "../record-builder.js";
import {
  chemblActivityApiUrl,
  chemblAssayUrl,
  chemblCompoundUrl,
  chemblDocumentUrl,
  chemblTargetUrl,
  normalizeChemblId,
} from "./chembl-ids.js";
import { type ChemblItem, definedEntries, numberField, textField } from "./chembl-page.js";

/** ChEMBL's one-letter assay types. */
const ASSAY_TYPES: Readonly<Record<string, string>> = {
  B: "binding",
  F: "functional",
  A: "ADME",
  T: "toxicity",
  P: "physicochemical",
  U: "unclassified",
};

/**
 * A structured record of one activity: the standardized value (type, relation, value, units, pChEMBL),
 * the compound, target, assay and source document it links, and ChEMBL's validity flags as warnings.
 * Activities have no web page of their own: the record cites the page of its assay (which lists the
 * assay's measured values), or of its source document when ChEMBL names no assay, and keeps the
 * web-service resource of the activity as a `chembl.activity` cross-reference for programs.
 * @param item one element of an `activities` list
 * @returns the record, or undefined when the item has no integer `activity_id`
 */
export function chemblActivityRecord(item: ChemblItem): McpRecord | undefined {
  const activityId = numberField(item.activity_id);
  if (activityId === undefined || !Number.isInteger(activityId) || activityId < 0) return undefined;
  const id = String(activityId);
  const moleculeId = chemblIdOf(item.molecule_chembl_id);
  const targetId = chemblIdOf(item.target_chembl_id);
  const assayId = chemblIdOf(item.assay_chembl_id);
  const documentId = chemblIdOf(item.document_chembl_id);
  const links: [string | undefined, string, (id: string) => string][] = [
    [moleculeId, "chembl.compound", chemblCompoundUrl],
    [targetId, "chembl.target", chemblTargetUrl],
    [assayId, "chembl.assay", chemblAssayUrl],
    [documentId, "chembl.document", chemblDocumentUrl],
  ];
  const crossReferences: CrossReference[] = links.flatMap(([linked, identifierType, url]) =>
    linked ? [{ identifier: linked, identifierType, url: url(linked) }] : [],
  );
  crossReferences.push({ identifier: id, identifierType: "chembl.activity", url: chemblActivityApiUrl(id) });
  const page = citedPage(id, assayId, documentId);
  const assayType = textField(item.assay_type);
  const warnings: string[] = [];
  const validity = textField(item.data_validity_comment);
  if (validity) warnings.push(`ChEMBL flags this value: ${validity}.`);
  if (numberField(item.potential_duplicate) === 1 || item.potential_duplicate === true) {
    warnings.push("ChEMBL marks this value as a potential duplicate of one reported earlier.");
  }
  if (!assayId && !documentId) {
    warnings.push(
      "ChEMBL names no assay or document for this value; the citation is its web-service resource.",
    );
  }
  return buildRecord({
    source: "chembl",
    identifier: id,
    identifierType: "chembl.activity",
    label: page.label,
    url: page.url,
    title: titleOf(item, moleculeId, targetId),
    year: numberField(item.document_year),
    crossReferences,
    contentScope: "structured-record",
    warnings,
    structuredData: definedEntries({
      moleculeChemblId: moleculeId,
      moleculeName: textField(item.molecule_pref_name),
      parentMoleculeChemblId: chemblIdOf(item.parent_molecule_chembl_id),
      targetChemblId: targetId,
      targetName: textField(item.target_pref_name),
      targetOrganism: textField(item.target_organism),
      assayChemblId: assayId,
      assayType,
      assayTypeDescription: assayType ? ASSAY_TYPES[assayType] : undefined,
      assayDescription: textField(item.assay_description),
      standardType: textField(item.standard_type),
      standardRelation: textField(item.standard_relation),
      standardValue: numberField(item.standard_value),
      standardUnits: textField(item.standard_units),
      pchemblValue: numberField(item.pchembl_value),
      publishedType: textField(item.type),
      publishedRelation: textField(item.relation),
      publishedValue: numberField(item.value),
      publishedUnits: textField(item.units),
      activityComment: textField(item.activity_comment),
      dataValidityComment: validity,
      documentChemblId: documentId,
      documentJournal: textField(item.document_journal),
      documentYear: numberField(item.document_year),
    }),
  });
}

/** The page a reader can open for an activity: its assay's, else its document's, else the web-service resource. */
function citedPage(id: string, assayId?: string, documentId?: string): { label: string; url: string } {
  if (assayId) return { label: `ChEMBL activity ${id} (assay ${assayId})`, url: chemblAssayUrl(assayId) };
  if (documentId) {
    return { label: `ChEMBL activity ${id} (document ${documentId})`, url: chemblDocumentUrl(documentId) };
  }
  return { label: `ChEMBL activity ${id}`, url: chemblActivityApiUrl(id) };
}

function chemblIdOf(value: unknown): string | undefined {
  return normalizeChemblId(textField(value) ?? "");
}

/** `IC50 = 50 nM: GEFITINIB on Epidermal growth factor receptor erbB1`, from standardized values first. */
function titleOf(item: ChemblItem, moleculeId?: string, targetId?: string): string | undefined {
  const type = textField(item.standard_type) ?? textField(item.type);
  const value = textField(item.standard_value) ?? textField(item.value);
  const relation = textField(item.standard_relation) ?? textField(item.relation) ?? "=";
  const units = textField(item.standard_units) ?? textField(item.units);
  const comment = textField(item.activity_comment);
  let measurement: string | undefined;
  if (type && value !== undefined) {
    const shown = numberField(value)?.toString() ?? value;
    measurement = `${type} ${relation} ${shown}${units ? ` ${units}` : ""}`;
  } else if (type && comment) measurement = `${type}: ${comment}`;
  else measurement = type ?? comment;
  if (!measurement) return undefined;
  const molecule = textField(item.molecule_pref_name) ?? moleculeId;
  const target = textField(item.target_pref_name) ?? targetId;
  const subject = [molecule, target].filter(Boolean).join(" on ");
  return subject ? `${measurement}: ${subject}` : measurement;
}
