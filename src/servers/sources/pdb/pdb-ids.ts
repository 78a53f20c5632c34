/**
 * PDB entry identifiers: classic four-character ids (`4HHB`) and the extended wwPDB form (`pdb_00004hhb`),
 * in bare, prefixed, DOI and URL forms. Extended ids whose number part starts with `0000` are the classic id
 * written long, so both forms normalize to the same identifier.
 */
import { normalizeDoi, urlHostPath } from "../identifiers.js";

/** A normalized PDB entry id. */
export interface PdbId {
  /** The id the APIs and pages use: `4HHB`, or `PDB_00012ABC` for an id with no classic form. */
  id: string;
  /** The extended form, lower-case (`pdb_00004hhb`). */
  extendedId: string;
}

const CLASSIC = /^[1-9][A-Z0-9]{3}$/;
const EXTENDED = /^PDB_([0-9A-Z]{8})$/;
// A chain or entity suffix (4HHB_A, 4HHB.B, 4HHB_1) names a part of the entry; the entry is what is looked up.
const PART_SUFFIX = /^(.+?)[._][A-Z0-9]{1,4}$/;
const URL_FORMS: readonly RegExp[] = [
  /^rcsb\.org\/(?:structure|3d-view|sequence|annotations)\/([^/]+)\/?$/i,
  /^files\.rcsb\.org\/(?:download|view|header)\/([^/.]+)(?:\.[a-z0-9.]+)?$/i,
  /^data\.rcsb\.org\/rest\/v1\/core\/entry\/([^/]+)\/?$/i,
  /^ebi\.ac\.uk\/pdbe\/entry\/pdb\/([^/]+)\/?$/i,
  /^pdbj\.org\/mine\/summary\/([^/]+)\/?$/i,
  /^identifiers\.org\/pdb[:/]([^/]+)\/?$/i,
];

/**
 * Normalizes a PDB entry id.
 * @param value user input: `4HHB`, `4hhb`, `PDB:4HHB`, `pdb_00004hhb`, `4HHB_A`, the entry DOI
 *   `10.2210/pdb4hhb/pdb`, or an rcsb.org / files.rcsb.org / PDBe / PDBj / identifiers.org URL
 * @returns the id and its extended form, or undefined when it is not a PDB id
 */
export function normalizePdbId(value: string): PdbId | undefined {
  let text = value.trim();
  const doi = normalizeDoi(text);
  if (doi) {
    const match = /^10\.2210\/pdb([^/]+)\/pdb$/i.exec(doi);
    if (!match?.[1]) return undefined;
    text = match[1];
  } else {
    const hostPath = urlHostPath(text);
    if (hostPath) {
      const inner = URL_FORMS.map((form) => form.exec(hostPath)?.[1]).find((m) => m !== undefined);
      if (inner === undefined) return undefined;
      text = inner;
    }
  }
  text = text.replace(/^pdb\s*[:\s]\s*/i, "").toUpperCase();
  const part = PART_SUFFIX.exec(text);
  if (part?.[1] && (CLASSIC.test(part[1]) || EXTENDED.test(part[1]))) text = part[1];
  if (CLASSIC.test(text)) return { id: text, extendedId: `pdb_0000${text.toLowerCase()}` };
  const extended = EXTENDED.exec(text)?.[1];
  if (!extended) return undefined;
  const classic = extended.slice(4);
  if (extended.startsWith("0000") && CLASSIC.test(classic)) {
    return { id: classic, extendedId: `pdb_${extended.toLowerCase()}` };
  }
  return { id: `PDB_${extended}`, extendedId: `pdb_${extended.toLowerCase()}` };
}

/**
 * The canonical HTTPS page of a PDB entry on RCSB.org.
 * @param id a normalized id
 * @returns `https://www.rcsb.org/structure/<id>`
 */
export function pdbEntryUrl(id: string): string {
  return `https://www.rcsb.org/structure/${id}`;
}

/**
 * The HTTPS download URL of an entry's coordinate file on files.rcsb.org.
 * @param id a normalized id
 * @param format `cif` (PDBx/mmCIF) or `pdb` (legacy PDB format)
 * @returns `https://files.rcsb.org/download/<id>.<format>`
 */
export function pdbFileUrl(id: string, format: "cif" | "pdb"): string {
  return `https://files.rcsb.org/download/${id}.${format}`;
}

/**
 * The DOI every PDB entry has (`10.2210/pdb4hhb/pdb`).
 * @param id a normalized classic id
 * @returns the DOI, or undefined for an extended-only id (its DOI form is not settled)
 */
export function pdbEntryDoi(id: string): string | undefined {
  return CLASSIC.test(id) ? `10.2210/pdb${id.toLowerCase()}/pdb` : undefined;
}
