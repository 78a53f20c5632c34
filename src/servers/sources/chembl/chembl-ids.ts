/**
 * ChEMBL identifiers (`CHEMBL25`) in their bare, prefixed and URL forms, chemical structure inputs
 * (SMILES, InChIKey) for similarity searches, and the canonical HTTPS pages of ChEMBL entities.
 */
import { invalidId, urlHostPath } from "../identifiers.js";

const CHEMBL_ID = /^CHEMBL[1-9]\d{0,9}$/i;
const INCHIKEY = /^[A-Z]{14}-[A-Z]{10}-[A-Z]$/;
// The SMILES alphabet (atoms, bonds, branches, rings, charges, stereo, ring-bond numbers >9 with `%`).
const SMILES = /^[A-Za-z0-9@+\-[\]()\\/%=#$:.*~]+$/;
const MAX_SMILES_LENGTH = 2000;

/** The ChEMBL web pages of an id, as users paste them (new "explore" interface and old report cards). */
const CHEMBL_PATHS = [
  /^ebi\.ac\.uk\/chembl\/(?:explore|g\/#browse)\/(?:compound|target|assay|document)\/(CHEMBL\d+)\/?$/i,
  /^ebi\.ac\.uk\/chembl\/(?:compound|target|assay|document)_report_card\/(CHEMBL\d+)\/?$/i,
  /^ebi\.ac\.uk\/chembl\/api\/data\/(?:molecule|target|assay|document)\/(CHEMBL\d+)(?:\.json)?\/?$/i,
  /^identifiers\.org\/chembl(?:\.compound|\.target)?:(CHEMBL\d+)\/?$/i,
  /^identifiers\.org\/chembl(?:\.compound|\.target)?\/(CHEMBL\d+)\/?$/i,
];

/**
 * Normalizes a ChEMBL id from `CHEMBL25`, `chembl25`, `ChEMBL:CHEMBL25`, `chembl.compound:CHEMBL25`, or a
 * ChEMBL or identifiers.org URL (`https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL25`).
 * @param value user input
 * @returns the id in canonical case (`CHEMBL25`), or undefined when it is not one
 */
export function normalizeChemblId(value: string): string | undefined {
  let text = value.trim();
  const hostPath = urlHostPath(text);
  if (hostPath) {
    const match = CHEMBL_PATHS.map((pattern) => pattern.exec(hostPath)).find((m) => m?.[1]);
    if (!match?.[1]) return undefined;
    text = match[1];
  }
  text = text.replace(/^chembl(?:\.compound|\.target)?\s*:\s*/i, "");
  return CHEMBL_ID.test(text) ? text.toUpperCase() : undefined;
}

const ID_FORMS = "a ChEMBL id (CHEMBL25, chembl.compound:CHEMBL25 or a ChEMBL page URL)";

/**
 * A ChEMBL id from a tool input, in any form `normalizeChemblId` takes.
 * @param value user input
 * @returns the normalized id
 * @throws ProviderError `invalid_id` naming the accepted forms
 */
export function chemblIdOrThrow(value: string): string {
  return normalizeChemblId(value) ?? invalidId(value, ID_FORMS);
}

/** A structure to compare against, as ChEMBL's similarity resource accepts it. */
export type ChemblStructure =
  | { type: "chembl-id"; value: string }
  | { type: "inchikey"; value: string }
  | { type: "smiles"; value: string };

/**
 * Classifies a similarity-search input: a ChEMBL id (any form `normalizeChemblId` takes), a standard
 * InChIKey, or a SMILES string.
 * @param value user input
 * @returns the structure, or undefined when it is none of them (spaces, characters outside SMILES, too long)
 */
export function parseChemblStructure(value: string): ChemblStructure | undefined {
  const text = value.trim();
  const id = normalizeChemblId(text);
  if (id) return { type: "chembl-id", value: id };
  if (INCHIKEY.test(text)) return { type: "inchikey", value: text };
  // A SMILES has at least one atom symbol; a bare number or punctuation is not a structure.
  if (text.length <= MAX_SMILES_LENGTH && SMILES.test(text) && /[A-Za-z]/.test(text)) {
    return { type: "smiles", value: text };
  }
  return undefined;
}

/**
 * The canonical HTTPS page of a ChEMBL compound.
 * @param chemblId a normalized molecule ChEMBL id
 * @returns `https://www.ebi.ac.uk/chembl/explore/compound/<id>`
 */
export function chemblCompoundUrl(chemblId: string): string {
  return `https://www.ebi.ac.uk/chembl/explore/compound/${chemblId}`;
}

/**
 * The canonical HTTPS page of a ChEMBL target.
 * @param chemblId a normalized target ChEMBL id
 * @returns `https://www.ebi.ac.uk/chembl/explore/target/<id>`
 */
export function chemblTargetUrl(chemblId: string): string {
  return `https://www.ebi.ac.uk/chembl/explore/target/${chemblId}`;
}

/**
 * The canonical HTTPS page of a ChEMBL assay.
 * @param chemblId a normalized assay ChEMBL id
 * @returns `https://www.ebi.ac.uk/chembl/explore/assay/<id>`
 */
export function chemblAssayUrl(chemblId: string): string {
  return `https://www.ebi.ac.uk/chembl/explore/assay/${chemblId}`;
}

/**
 * The canonical HTTPS page of a ChEMBL document (the publication or dataset a value was extracted from).
 * @param chemblId a normalized document ChEMBL id
 * @returns `https://www.ebi.ac.uk/chembl/explore/document/<id>`
 */
export function chemblDocumentUrl(chemblId: string): string {
  return `https://www.ebi.ac.uk/chembl/explore/document/${chemblId}`;
}

/**
 * The web-service resource of one activity value: JSON for programs, not a page for readers. Activities have
 * no web page of their own, so records cite their assay's page and keep this as a machine cross-reference.
 * @param activityId ChEMBL's numeric `activity_id`
 * @returns `https://www.ebi.ac.uk/chembl/api/data/activity/<id>`
 */
export function chemblActivityApiUrl(activityId: string): string {
  return `https://www.ebi.ac.uk/chembl/api/data/activity/${activityId}`;
}

/**
 * The web-service resource of one drug mechanism (JSON). Mechanisms have no page of their own; they are
 * shown in the "Mechanism of action" section of the compound's page, which records cite.
 * @param mechanismId ChEMBL's numeric `mec_id`
 * @returns `https://www.ebi.ac.uk/chembl/api/data/mechanism/<id>`
 */
export function chemblMechanismApiUrl(mechanismId: string): string {
  return `https://www.ebi.ac.uk/chembl/api/data/mechanism/${mechanismId}`;
}
