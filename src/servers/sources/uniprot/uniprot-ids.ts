/**
 * UniProtKB accessions: bare (`P15056`), prefixed (`UniProtKB:P15056`), FASTA-header (`sp|P15056|BRAF_HUMAN`),
 * isoform (`P15056-2`), sequence-version (`P15056.3`) and URL forms.
 */
import { urlHostPath } from "../identifiers.js";

/** A normalized UniProtKB accession. */
export interface UniprotAccession {
  /** The canonical entry accession, upper-case, without isoform or version (`P15056`). */
  accession: string;
  /** The isoform number of `P15056-2`, when one was given. */
  isoform?: number;
  /** The sequence version of `P15056.3`, when one was given. */
  version?: number;
}

// The accession format UniProt documents (https://www.uniprot.org/help/accession_numbers).
const ACCESSION =
  /^([OPQ][0-9][A-Z0-9]{3}[0-9]|[A-NR-Z][0-9](?:[A-Z][A-Z0-9]{2}[0-9]){1,2})(?:-(\d+))?(?:\.(\d+))?$/;
const URL_FORMS: readonly RegExp[] = [
  /^(?:www\.)?uniprot\.org\/(?:uniprotkb|uniprot)\/([^/]+?)(?:\.(?:fasta|txt|json|xml))?(?:\/entry)?\/?$/i,
  /^rest\.uniprot\.org\/uniprotkb\/([^/]+?)(?:\.(?:fasta|txt|json|xml|gff))?\/?$/i,
  /^purl\.uniprot\.org\/(?:uniprot|isoforms)\/([^/]+)\/?$/i,
  /^identifiers\.org\/uniprot[:/]([^/]+)\/?$/i,
];

/**
 * Normalizes a UniProtKB accession.
 * @param value user input: `P15056`, `p15056`, `UniProtKB:P15056`, `sp|P15056|BRAF_HUMAN`, `P15056-2`,
 *   `P15056.3`, or a www.uniprot.org / rest.uniprot.org / purl.uniprot.org / identifiers.org URL
 * @returns the accession with its isoform and version, or undefined when it is not one
 */
export function normalizeUniprotAccession(value: string): UniprotAccession | undefined {
  let text = value.trim();
  const hostPath = urlHostPath(text);
  if (hostPath) {
    const inner = URL_FORMS.map((form) => form.exec(hostPath)?.[1]).find((match) => match !== undefined);
    if (inner === undefined) return undefined;
    text = inner;
  }
  const fastaHeader = /^>?(?:sp|tr)\|([^|]+)\|/i.exec(text);
  if (fastaHeader?.[1]) text = fastaHeader[1];
  text = text.replace(/^(?:uniprot(?:kb)?(?:\/(?:swiss-prot|trembl))?)\s*:\s*/i, "").toUpperCase();
  const match = ACCESSION.exec(text);
  if (!match?.[1]) return undefined;
  const result: UniprotAccession = { accession: match[1] };
  if (match[2] !== undefined) {
    const isoform = Number(match[2]);
    if (isoform < 1) return undefined;
    result.isoform = isoform;
  }
  if (match[3] !== undefined) {
    const version = Number(match[3]);
    if (version < 1) return undefined;
    result.version = version;
  }
  return result;
}

/**
 * The accession as UniProt writes it, with the isoform suffix when there is one.
 * @param id a normalized accession
 * @returns `P15056` or `P15056-2`
 */
export function uniprotAccessionText(id: UniprotAccession): string {
  return id.isoform === undefined ? id.accession : `${id.accession}-${id.isoform}`;
}

/**
 * The canonical HTTPS page of a UniProtKB entry.
 * @param accession a normalized entry accession
 * @returns `https://www.uniprot.org/uniprotkb/<accession>/entry`
 */
export function uniprotEntryUrl(accession: string): string {
  return `https://www.uniprot.org/uniprotkb/${accession}/entry`;
}

/**
 * The UniSave page of one version of an entry: the entry as it was in that version, which the entry page
 * (always the current version) no longer shows once UniProt revises it.
 * @param accession a normalized entry accession
 * @param entryVersion the entry version read (`entryAudit.entryVersion`)
 * @returns `https://rest.uniprot.org/unisave/<accession>?format=txt&versions=<version>`
 */
export function uniprotVersionUrl(accession: string, entryVersion: number): string {
  return `https://rest.uniprot.org/unisave/${accession}?format=txt&versions=${entryVersion}`;
}

/**
 * The HTTPS download URL of an entry or isoform in a file format of the UniProt REST API.
 * @param accessionText an accession, optionally with isoform suffix (`P15056-2`)
 * @param format `fasta` (sequence) or `txt` (the UniProtKB flat file)
 * @returns `https://rest.uniprot.org/uniprotkb/<accession>.<format>`
 */
export function uniprotFileUrl(accessionText: string, format: "fasta" | "txt"): string {
  return `https://rest.uniprot.org/uniprotkb/${accessionText}.${format}`;
}
