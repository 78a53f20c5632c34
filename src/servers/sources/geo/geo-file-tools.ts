/** The GEO file tools: `list_files` and `prepare_dataset_download` (download candidates, never downloads). */
import { z } from "zod";
import type { ArtifactCandidate } from "../../../contract/index.js";
import { invalidId } from "../identifiers.js";
import { maxResultsInput, optionalInput, startInput } from "../input-schemas.js";
import { offsetPaging } from "../paging.js";
import { ProviderError } from "../provider-error.js";
import { defineTool } from "../source-module.js";
import { GEO_ID_FORMS, normalizeGeoAccession } from "./geo-accessions.js";
import { fetchGeoRecord, folderWarnings, type GeoFile, listGeoFiles } from "./geo-files.js";
import { geoAccessionInput } from "./geo-search-tools.js";

/** The licence each GEO file candidate carries (GEO's disclaimer: no restrictions by NCBI). */
export const GEO_FILE_LICENSE =
  "NCBI places no restrictions on GEO data; submitters may hold patent, copyright or other rights";

/** Most candidates one call returns. */
const MAX_CANDIDATES = 50;

/** `geo_list_files`: the files in a record's FTP folders, paged. */
export const geoListFilesTool = defineTool({
  id: "list_files",
  title: "List GEO files",
  description:
    "List the downloadable files of a GEO record from the GEO FTP site: supplementary files (suppl/) of a " +
    "series, sample or platform, plus series matrix files (GSE), platform annotation (GPL) or dataset SOFT " +
    "files (GDS), with folder, size and date in data.files. Pages with start/max_results.",
  inputShape: {
    accession: geoAccessionInput,
    max_results: maxResultsInput(100, 500),
    start: startInput(99_999),
  },
  async run(input, { http }) {
    const id = normalizeGeoAccession(input.accession) ?? invalidId(input.accession, GEO_ID_FORMS);
    const record = await fetchGeoRecord(http, id);
    const list = await listGeoFiles(http, id);
    const start = input.start ?? 0;
    const page = list.files.slice(start, start + input.max_results);
    return {
      records: [record],
      warnings: folderWarnings(list),
      data: {
        accession: id.accession,
        ...offsetPaging({ total: list.files.length, start, fetched: page.length }),
        files: page,
      },
    };
  },
});

/** `geo_prepare_dataset_download`: HTTPS candidates for a record's files. */
export const geoPrepareDatasetDownloadTool = defineTool({
  id: "prepare_dataset_download",
  title: "Plan a GEO dataset download",
  description:
    "Plan the download of GEO files: returns download candidates (HTTPS URL on the GEO FTP site, format, size " +
    "when known, licence) for artifact_download. Downloads nothing. Name files from list_files, or omit files " +
    `for every listed file (at most ${MAX_CANDIDATES}). Names that are not listed are reported in data.failed.`,
  inputShape: {
    accession: geoAccessionInput,
    files: optionalInput(z.array(z.string().trim().min(1)).max(MAX_CANDIDATES)).describe(
      `File names from list_files (e.g. GSE236084_RAW.tar) or their URLs, at most ${MAX_CANDIDATES}; omit for every listed file.`,
    ),
  },
  async run(input, { http }) {
    const id = normalizeGeoAccession(input.accession) ?? invalidId(input.accession, GEO_ID_FORMS);
    const record = await fetchGeoRecord(http, id);
    const list = await listGeoFiles(http, id);
    const warnings = folderWarnings(list);
    if (list.files.length === 0) {
      throw new ProviderError("not_found", `GEO lists no downloadable files for ${id.accession}.`);
    }
    const failed: { id: string; reason: string }[] = [];
    let chosen: GeoFile[];
    if (input.files && input.files.length > 0) {
      chosen = [];
      for (const raw of input.files) {
        const name = requestedName(raw);
        const file = name === undefined ? undefined : list.files.find((f) => f.name === name);
        if (name === undefined) failed.push({ id: raw, reason: "invalid_id" });
        else if (!file) failed.push({ id: raw, reason: "not_found" });
        else if (!chosen.includes(file)) chosen.push(file);
      }
      if (chosen.length === 0) {
        throw new ProviderError("not_found", `None of the named files is listed for ${id.accession}.`);
      }
      if (failed.length > 0) warnings.push(`${failed.length} named file(s) failed; see data.failed.`);
    } else {
      chosen = list.files.slice(0, MAX_CANDIDATES);
      if (list.files.length > MAX_CANDIDATES) {
        warnings.push(
          `${list.files.length} files are listed; candidates cover the first ${MAX_CANDIDATES}. Name files to choose others.`,
        );
      }
    }
    return {
      records: [record],
      artifacts: chosen.map((file) => candidateOf(id.accession, file)),
      warnings,
      data: { accession: id.accession, listed: list.files.length, returned: chosen.length, failed },
    };
  },
});

function candidateOf(accession: string, file: GeoFile): ArtifactCandidate {
  const candidate: ArtifactCandidate = {
    candidateId: `geo:${accession}:${file.folder}/${file.name}`,
    sourceId: "geo",
    sourceRecordId: accession,
    url: file.url,
    format: file.format,
    kind: "dataset",
    license: GEO_FILE_LICENSE,
    filename: file.name,
  };
  if (file.sizeBytes !== undefined) candidate.sizeBytes = file.sizeBytes;
  return candidate;
}

/**
 * The file name a request names: a bare name, or the last segment of a GEO file URL.
 * @param raw user input
 * @returns the decoded name, or undefined when it cannot be a file name
 */
function requestedName(raw: string): string | undefined {
  let name = raw.trim();
  if (/^[a-z]+:\/\//i.test(name) || name.includes("/")) {
    const segment =
      name
        .replace(/[?#].*$/, "")
        .split("/")
        .at(-1) ?? "";
    try {
      name = decodeURIComponent(segment);
    } catch {
      return undefined;
    }
  }
  return name && name !== "." && name !== ".." && !name.includes("\\") ? name : undefined;
}
