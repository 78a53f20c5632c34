/**
 * The GEO parsers over real GEO answers in ../shared/fixtures/providers/geo (see README.txt there for their
 * origin). Skipped, visibly, when that folder is not next to the repository.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import {
  GEO_FTP_ROOT,
  geoFtpFolder,
  geoUid,
  normalizeGeoAccession,
} from "../../../src/servers/sources/geo/geo-accessions.js";
import { geoSummaryRecord } from "../../../src/servers/sources/geo/geo-summary-parser.js";
import { parseEsummaryJson } from "../../../src/servers/sources/ncbi/esummary.js";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { readManifest, resultUrls, SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const SAMPLES = path.join(SHARED_PROVIDER_SAMPLES, "geo");
const hasSamples = existsSync(SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SAMPLES} not found)`;

function sample(file: string): ProviderAnswer {
  return { text: readFileSync(path.join(SAMPLES, file), "utf8"), host: "sample", status: 200 };
}

/** The values of one `!Key = value` line kind of a SOFT file. */
function softValues(file: string, key: string): string[] {
  return sample(file)
    .text.split("\n")
    .filter((line) => line.startsWith(`!${key} = `))
    .map((line) => line.slice(key.length + 4).trim());
}

describe.skipIf(!hasSamples)(`real GEO samples${suffix}`, () => {
  test("ESummary of GSE236084: the series record with summary, platform, samples, PubMed and BioProject", () => {
    const id = normalizeGeoAccession("GSE236084");
    expect(id && geoUid(id)).toBe("200236084");
    const { items, missing } = parseEsummaryJson(sample("esummary_gds_json_GSE236084.json"), ["200236084"]);
    expect(missing).toEqual([]);
    const item = items.get("200236084");
    const record = item ? geoSummaryRecord(item) : undefined;
    expect(record).toMatchObject({
      identifier: "GSE236084",
      identifierType: "gse",
      url: "https://www.ncbi.nlm.nih.gov/geo/query/acc.cgi?acc=GSE236084",
      year: 2024,
      contentScope: "structured-record",
      structuredData: {
        studyType: "Expression profiling by high throughput sequencing",
        organisms: ["Mus musculus"],
        platforms: ["GPL24247"],
        sampleCount: 5,
        supplementaryFileTypes: ["TAR", "TXT"],
        published: "2024-10-04",
        bioproject: "PRJNA988806",
      },
    });
    expect(record?.title).toMatch(/^Aspartate signaling increases the aggressiveness of lung metastases/);
    expect(record?.abstract).toMatch(/^Lung metastases are detected in more than half/);
    expect(record?.structuredData?.samples).toHaveLength(5);
    expect(record?.crossReferences.map((x) => [x.identifierType, x.identifier])).toEqual([
      ["pmid", "39743589"],
      ["gpl", "GPL24247"],
      ["bioproject", "PRJNA988806"],
    ]);
    // The computed FTP folder is the one NCBI names in ftplink (there as ftp://).
    expect(record?.structuredData?.ftpFolder).toBe(String(item?.ftplink).replace(/^ftp:\/\//, "https://"));
    const hosts = readManifest("geo").governance.networkHosts;
    for (const url of resultUrls({ records: record ? [record] : [] }))
      expect(hosts).toContain(new URL(url).hostname);
  });

  test("the FTP layout agrees with the supplementary file a real SOFT family file names", () => {
    const [supplementary] = softValues("GSE105845_family.soft", "Series_supplementary_file");
    expect(supplementary).toBe(
      "ftp://ftp.ncbi.nlm.nih.gov/geo/series/GSE105nnn/GSE105845/suppl/GSE105845_RAW.tar",
    );
    const id = normalizeGeoAccession(supplementary ?? "");
    expect(id?.accession).toBe("GSE105845");
    expect(id && `${GEO_FTP_ROOT}${geoFtpFolder(id)}suppl/GSE105845_RAW.tar`).toBe(
      supplementary?.replace(/^ftp:\/\//, "https://"),
    );
  });

  test("the accessions a real SOFT file names for samples and platforms normalize", () => {
    const accessions = [
      ...softValues("GSE105845_family.soft", "Series_sample_id"),
      ...softValues("GSE105845_family.soft", "Series_platform_id"),
      ...softValues("GSM2795971_acc_cgi.soft", "Sample_geo_accession"),
    ];
    expect(accessions.map((a) => normalizeGeoAccession(a)?.accession)).toEqual([
      "GSM2828511",
      "GSM2828512",
      "GPL13112",
      "GSM2795971",
    ]);
  });
});
