/** ClinVar identifiers: variation ids, VCV and RCV accessions (bare, prefixed, versioned, or as URLs). */

/** What the accepted forms are, for `invalid_id` messages. */
export const CLINVAR_ID_FORMS =
  "a ClinVar VCV accession (VCV000012345), RCV accession (RCV000012345), variation id (12345) or ClinVar URL";

/** A normalized ClinVar identifier. */
export type ClinvarId =
  | {
      kind: "variation";
      /** The variation id (`12345`), which is also the ClinVar Entrez UID. */
      variationId: string;
      /** The VCV accession, zero-padded to 9 digits (`VCV000012345`). */
      accession: string;
      /** The version asked for (`VCV000012345.3` → 3). */
      version?: number;
    }
  | {
      kind: "rcv";
      /** The RCV accession, zero-padded to 9 digits (`RCV000012345`). */
      accession: string;
      version?: number;
    };

const ACCESSION = /^(VCV|RCV)0*([1-9]\d{0,8})(?:\.(\d+))?$/i;
const VARIATION_ID = /^[1-9]\d{0,8}$/;

/**
 * Normalizes a ClinVar identifier from `VCV000012345`, `VCV000012345.3`, `RCV000012345`, a variation id
 * `12345`, a `ClinVar:` or `VariationID:` prefix, or a ClinVar URL
 * (`https://www.ncbi.nlm.nih.gov/clinvar/variation/12345/`, `https://www.ncbi.nlm.nih.gov/clinvar/RCV000012345/`).
 * @param value user input
 * @returns the identifier, or undefined when it is none of these
 */
export function normalizeClinvarId(value: string): ClinvarId | undefined {
  let text = value.trim();
  if (/^(?:https?:\/\/)?(?:www\.)?ncbi\.nlm\.nih\.gov\//i.test(text)) {
    const match =
      /^(?:https?:\/\/)?(?:www\.)?ncbi\.nlm\.nih\.gov\/clinvar\/(?:variation\/)?([^/?#]+)\/?(?:[?#].*)?$/i.exec(
        text,
      );
    if (!match?.[1]) return undefined;
    text = match[1];
  } else if (/^[a-z]+:\/\//i.test(text)) {
    return undefined;
  }
  text = text.replace(/^(?:clinvar|variationid|variation id)\s*:\s*/i, "");
  if (VARIATION_ID.test(text)) return { kind: "variation", variationId: text, accession: vcvAccession(text) };
  const match = ACCESSION.exec(text);
  if (!match?.[1] || !match[2]) return undefined;
  const prefix = match[1].toUpperCase();
  const version = match[3] === undefined ? undefined : Number(match[3]);
  const accession = `${prefix}${match[2].padStart(9, "0")}`;
  const id: ClinvarId =
    prefix === "VCV" ? { kind: "variation", variationId: match[2], accession } : { kind: "rcv", accession };
  if (version !== undefined && version > 0) id.version = version;
  return id;
}

/**
 * The VCV accession of a variation id.
 * @param variationId a variation id (`12345`)
 * @returns `VCV000012345`
 */
export function vcvAccession(variationId: string): string {
  return `VCV${variationId.padStart(9, "0")}`;
}

/**
 * The canonical HTTPS page of a ClinVar variation (VCV record).
 * @param variationId a variation id
 * @returns `https://www.ncbi.nlm.nih.gov/clinvar/variation/<id>/`
 */
export function clinvarVariationUrl(variationId: string): string {
  return `https://www.ncbi.nlm.nih.gov/clinvar/variation/${variationId}/`;
}

/**
 * The canonical HTTPS page of a ClinVar RCV record.
 * @param accession an RCV accession without version
 * @returns `https://www.ncbi.nlm.nih.gov/clinvar/<RCV…>/`
 */
export function clinvarRcvUrl(accession: string): string {
  return `https://www.ncbi.nlm.nih.gov/clinvar/${accession}/`;
}

/**
 * The ClinVar page of one version of a VCV or RCV record: ClinVar resolves a versioned accession in its
 * record path, so a citation opens the version that was read even after ClinVar revises the record.
 * @param accession a VCV or RCV accession without version (`VCV000012397`)
 * @param version the version read (`1`)
 * @returns `https://www.ncbi.nlm.nih.gov/clinvar/VCV000012397.1/`
 */
export function clinvarVersionUrl(accession: string, version: string): string {
  return `https://www.ncbi.nlm.nih.gov/clinvar/${accession}.${version}/`;
}

/**
 * A variation id from a VCV accession.
 * @param accession `VCV000012345` (optionally versioned)
 * @returns `12345`, or undefined when it is not a VCV accession
 */
export function variationIdOf(accession: string): string | undefined {
  const match = /^VCV0*([1-9]\d{0,8})(?:\.\d+)?$/i.exec(accession.trim());
  return match?.[1];
}
