/**
 * GEO accessions (GSE series, GSM samples, GPL platforms, GDS curated datasets): normalization, their
 * Entrez UIDs in db=gds, their pages and their folders on the GEO FTP site.
 */

/** The four kinds of GEO record. */
export type GeoType = "GSE" | "GSM" | "GPL" | "GDS";

/** A normalized GEO accession. */
export interface GeoAccession {
  type: GeoType;
  /** The number without leading zeros (`236084`). */
  number: string;
  /** The canonical accession (`GSE236084`). */
  accession: string;
}

/** What the accepted forms are, for `invalid_id` messages. */
export const GEO_ID_FORMS =
  "a GEO accession (GSE236084, GSM7518067, GPL24247 or GDS507) or a GEO page or FTP URL";

const ACCESSION = /^(GSE|GSM|GPL|GDS)0*([1-9]\d{0,8})$/i;

// In db=gds the UID of a record is its number plus a per-type offset; GDS records keep their number.
const UID_OFFSET: Record<GeoType, number> = { GDS: 0, GPL: 100_000_000, GSE: 200_000_000, GSM: 300_000_000 };

// The FTP tree keeps each type in its own folder.
const FTP_FOLDER: Record<GeoType, string> = {
  GSE: "series",
  GSM: "samples",
  GPL: "platforms",
  GDS: "datasets",
};

/**
 * Normalizes a GEO accession from `GSE236084`, `gse236084`, a `GEO:` prefix, a GEO page URL
 * (`https://www.ncbi.nlm.nih.gov/geo/query/acc.cgi?acc=GSE236084`, `…/sites/GDSbrowser?acc=GDS507`) or a
 * GEO FTP URL (`https://ftp.ncbi.nlm.nih.gov/geo/series/GSE236nnn/GSE236084/`).
 * @param value user input
 * @returns the accession, or undefined when it is not one
 */
export function normalizeGeoAccession(value: string): GeoAccession | undefined {
  let text = value.trim();
  if (/^(?:[a-z]+:\/\/|(?:www|ftp)\.ncbi\.nlm\.nih\.gov\/)/i.test(text)) {
    const found = fromUrl(/^[a-z]+:\/\//i.test(text) ? text : `https://${text}`);
    if (!found) return undefined;
    text = found;
  }
  const match = ACCESSION.exec(text.replace(/^geo\s*:\s*/i, ""));
  if (!match?.[1] || !match[2]) return undefined;
  const type = match[1].toUpperCase() as GeoType;
  return { type, number: match[2], accession: `${type}${match[2]}` };
}

function fromUrl(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (!/(?:^|\.)ncbi\.nlm\.nih\.gov$/i.test(url.hostname)) return undefined;
  const acc = url.searchParams.get("acc");
  if (acc) return acc;
  // FTP folders end with the accession: /geo/series/GSE236nnn/GSE236084/[suppl/]
  return url.pathname
    .split("/")
    .reverse()
    .find((segment) => ACCESSION.test(segment));
}

/**
 * The Entrez UID of an accession in db=gds.
 * @param id a normalized accession
 * @returns the UID (`200236084` for GSE236084)
 */
export function geoUid(id: GeoAccession): string {
  return String(UID_OFFSET[id.type] + Number(id.number));
}

/**
 * The canonical HTTPS page of a GEO record.
 * @param accession a canonical accession
 * @returns the GEO accession page (the GDS browser for curated datasets)
 */
export function geoRecordUrl(accession: string): string {
  return accession.startsWith("GDS")
    ? `https://www.ncbi.nlm.nih.gov/sites/GDSbrowser?acc=${accession}`
    : `https://www.ncbi.nlm.nih.gov/geo/query/acc.cgi?acc=${accession}`;
}

/**
 * The folder of a record on the GEO FTP site, below `https://ftp.ncbi.nlm.nih.gov/geo`.
 * @param id a normalized accession
 * @returns e.g. `/series/GSE236nnn/GSE236084/` (records below number 1000 sit in `GSEnnn`)
 */
export function geoFtpFolder(id: GeoAccession): string {
  const stem = id.number.length > 3 ? id.number.slice(0, -3) : "";
  return `/${FTP_FOLDER[id.type]}/${id.type}${stem}nnn/${id.accession}/`;
}

/** The public HTTPS root of the GEO FTP site, which candidate URLs always name. */
export const GEO_FTP_ROOT = "https://ftp.ncbi.nlm.nih.gov/geo";
