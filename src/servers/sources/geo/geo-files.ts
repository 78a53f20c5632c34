/** The files of a GEO record on the GEO FTP site (over HTTPS), and the record itself via ESummary. */
import type { McpRecord } from "../../../contract/index.js";
import { esummary } from "../ncbi/esummary.js";
import { esearch } from "../ncbi/eutils.js";
import { ProviderError } from "../provider-error.js";
import type { SourceHttp } from "../source-module.js";
import { GEO_FTP_ROOT, type GeoAccession, type GeoType, geoFtpFolder, geoUid } from "./geo-accessions.js";
import { type FtpListingEntry, fileFormat, parseFtpListing } from "./geo-ftp-listing.js";
import { geoSummaryRecord, summaryAccession } from "./geo-summary-parser.js";

/** The folders listed per record type: supplementary files, plus the processed tables GEO generates. */
const FOLDERS: Record<GeoType, readonly string[]> = {
  GSE: ["suppl", "matrix"],
  GSM: ["suppl"],
  GPL: ["suppl", "annot"],
  GDS: ["soft"],
};

/** One downloadable file of a GEO record. */
export interface GeoFile extends FtpListingEntry {
  /** The folder below the record's FTP folder (`suppl`, `matrix`, `annot`, `soft`). */
  folder: string;
  /** The public HTTPS URL. */
  url: string;
  /** The download format (`tar`, `txt.gz`). */
  format: string;
}

/** The files of a record, and what each folder said. */
export interface GeoFileList {
  files: GeoFile[];
  /** Folders that were listed, and those GEO has not (404) or would not list (403: no index). */
  folders: { folder: string; listed: boolean }[];
}

/**
 * Looks up the ESummary record of one accession: by its computed UID, else (when GEO numbers it
 * differently) by an `[ACCN]` search.
 * @param http the geo source's HTTP client
 * @param id a normalized accession
 * @returns the record
 * @throws ProviderError `not_found` when GEO has no such public record; HTTP and parse failures
 */
export async function fetchGeoRecord(http: SourceHttp, id: GeoAccession): Promise<McpRecord> {
  const direct = await summaryRecordOf(http, id, geoUid(id));
  if (direct) return direct;
  const page = await esearch(http, { db: "gds", term: `${id.accession}[ACCN]`, start: 0, max: 5 });
  for (const uid of page.ids.filter((uid) => uid !== geoUid(id))) {
    const found = await summaryRecordOf(http, id, uid);
    if (found) return found;
  }
  throw new ProviderError("not_found", `GEO has no public record ${id.accession}.`);
}

async function summaryRecordOf(
  http: SourceHttp,
  id: GeoAccession,
  uid: string,
): Promise<McpRecord | undefined> {
  const item = (await esummary(http, "gds", [uid])).items.get(uid);
  // A UID may belong to another record (an accession renumbered); only the asked accession counts.
  if (!item || summaryAccession(item)?.accession !== id.accession) return undefined;
  return geoSummaryRecord(item);
}

/**
 * Lists the files of a record's folders, one request per folder, in folder order.
 * @param http the geo source's HTTP client (with the `ftp` endpoint)
 * @param id a normalized accession
 * @returns the files with public HTTPS URLs, and which folders were listed
 * @throws ProviderError when a listing fails other than by 403/404, or is not a listing
 */
export async function listGeoFiles(http: SourceHttp, id: GeoAccession): Promise<GeoFileList> {
  const base = geoFtpFolder(id);
  const files: GeoFile[] = [];
  const folders: GeoFileList["folders"] = [];
  for (const folder of FOLDERS[id.type]) {
    const response = await http.request("ftp", `${base}${folder}/`, {
      accept: "text/html",
      // 404: no such folder; 403: GEO's answer for a folder without an index (no files to list).
      acceptStatuses: [403, 404],
    });
    const listed = response.status >= 200 && response.status < 300;
    folders.push({ folder, listed });
    if (!listed) continue;
    for (const entry of parseFtpListing(response)) {
      files.push({
        ...entry,
        folder,
        url: `${GEO_FTP_ROOT}${base}${folder}/${encodeURIComponent(entry.name)}`,
        format: fileFormat(entry.name),
      });
    }
  }
  return { files, folders };
}

/**
 * Warnings about folders GEO did not list.
 * @param list a file list
 * @returns zero or one warning
 */
export function folderWarnings(list: GeoFileList): string[] {
  const unlisted = list.folders.filter((f) => !f.listed).map((f) => `${f.folder}/`);
  if (unlisted.length === 0) return [];
  return [`GEO lists no ${unlisted.join(" or ")} folder for this record (absent or without files).`];
}
