import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import {
  geoFtpFolder,
  geoUid,
  normalizeGeoAccession,
} from "../../../src/servers/sources/geo/geo-accessions.js";
import { fileFormat } from "../../../src/servers/sources/geo/geo-ftp-listing.js";
import { GEO_FIXTURE_QUERY, GEO_FIXTURES, geoFakeRoutes } from "../../fixtures/providers/geo/routes.js";
import {
  errorOf,
  expectUrlsOnManifestHosts,
  okResult,
  readManifest,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const ESEARCH = "/geo/eutils/esearch.fcgi";
const ESUMMARY = "/geo/eutils/esummary.fcgi";
const FTP = "/geo/ftp";
const GSE1_FOLDER = "https://ftp.ncbi.nlm.nih.gov/geo/series/GSE900nnn/GSE900001";

let h: SourcesHarness;
beforeEach(async () => {
  h = await startSourcesHarness(geoFakeRoutes(), {
    only: ["geo"],
    env: { NCBI_EMAIL: "lab@example.org" },
  });
});
afterEach(() => h.close());

const requestsTo = (p: string) => h.provider.requests.filter((r) => r.path === p);
const ftpPaths = () => h.provider.requests.filter((r) => r.path.startsWith(FTP)).map((r) => r.path);

describe("geo_search_studies", () => {
  test("returns the series in ESearch order with summary, platforms, samples, publication and paging", async () => {
    const result = okResult(await h.call("geo_search_studies", { query: GEO_FIXTURE_QUERY, max_results: 2 }));
    const manifest = readManifest("geo");
    expect(result).toMatchObject({
      sourceId: "geo",
      toolId: "search_studies",
      attribution: manifest.governance.attribution,
      license: manifest.governance.license,
      data: { total: 42, start: 0, returned: 2, hasMore: true, nextStart: 2 },
    });
    expect(result.records.map((r) => r.identifier)).toEqual(["GSE900001", "GSE900002"]);
    expect(result.records[0]).toMatchObject({
      identifierType: "gse",
      title: "Single-cell atlas of an invented lung metastasis model",
      url: "https://www.ncbi.nlm.nih.gov/geo/query/acc.cgi?acc=GSE900001",
      primaryCitation: {
        label: "[GEO:GSE900001](https://www.ncbi.nlm.nih.gov/geo/query/acc.cgi?acc=GSE900001)",
      },
      year: 2024,
      contentScope: "structured-record",
      fullTextRetrieved: false,
      structuredData: {
        entryType: "GSE",
        studyType: "Expression profiling by high throughput sequencing",
        organisms: ["Mus musculus", "Homo sapiens"],
        platforms: ["GPL24247", "GPL9001"],
        series: [],
        sampleCount: 3,
        samples: [
          { accession: "GSM900011", title: "Lung, TSF injection, replicate a" },
          { accession: "GSM900012", title: "Lung, TSF injection, replicate b" },
          { accession: "GSM900013", title: "Lung, control injection" },
        ],
        supplementaryFileTypes: ["TAR", "CSV"],
        published: "2024-10-04",
        pubmedIds: ["39000001"],
        bioproject: "PRJNA9000001",
        ftpFolder: `${GSE1_FOLDER}/`,
      },
    });
    expect(result.records[0]?.abstract).toMatch(/^Metastatic cells reaching the lung/);
    expect(result.records[0]?.crossReferences.map((x) => [x.identifierType, x.identifier, x.url])).toEqual([
      ["pmid", "39000001", "https://pubmed.ncbi.nlm.nih.gov/39000001/"],
      ["gpl", "GPL24247", "https://www.ncbi.nlm.nih.gov/geo/query/acc.cgi?acc=GPL24247"],
      ["gpl", "GPL9001", "https://www.ncbi.nlm.nih.gov/geo/query/acc.cgi?acc=GPL9001"],
      ["gds", "GDS9001", "https://www.ncbi.nlm.nih.gov/sites/GDSbrowser?acc=GDS9001"],
      ["bioproject", "PRJNA9000001", "https://www.ncbi.nlm.nih.gov/bioproject/PRJNA9000001"],
    ]);
    // No PubMed link, no BioProject, no files: nothing is invented.
    expect(result.records[1]?.crossReferences.map((x) => x.identifierType)).toEqual(["gpl", "gpl"]);
    expect(result.records[1]?.structuredData).toMatchObject({ supplementaryFileTypes: [] });
    expect(result.records[1]?.structuredData).not.toHaveProperty("pubmedIds");
    expectUrlsOnManifestHosts(result, "geo");
  });

  test("sends ESearch on db=gds restricted to series by default, then one ESummary", async () => {
    okResult(
      await h.call("geo_search_studies", {
        query: GEO_FIXTURE_QUERY,
        max_results: 2,
        entry_type: "",
        organism: "",
      }),
    );
    expect(requestsTo(ESEARCH)[0]?.query).toMatchObject({
      db: "gds",
      term: "(lung metastasis) AND gse[ETYP]",
      retstart: "0",
      retmax: "2",
      tool: "sciencegate",
      email: "lab@example.org",
    });
    expect(requestsTo(ESUMMARY).map((r) => [r.query.db, r.query.id])).toEqual([
      ["gds", "200900001,200900002"],
    ]);
  });

  test("entry_type and organism become Entrez filters; no hits is an empty success", async () => {
    const result = okResult(
      await h.call("geo_search_studies", {
        query: GEO_FIXTURE_QUERY,
        entry_type: "gsm",
        organism: 'Mus "musculus"',
        start: 40,
      }),
    );
    expect(requestsTo(ESEARCH)[0]?.query).toMatchObject({
      term: '(lung metastasis) AND gsm[ETYP] AND "Mus musculus"[ORGN]',
      retstart: "40",
    });
    expect(result.records).toEqual([]);
    expect(result.data).toEqual({
      total: 0,
      start: 40,
      returned: 0,
      hasMore: false,
      droppedPhrases: ["zzqxv"],
    });
    expect(result.warnings).toEqual(['GEO found nothing for "zzqxv" and dropped it from the query.']);
    expect(requestsTo(ESUMMARY)).toHaveLength(0);
  });

  test("429 comes back as rate_limited with retryAfterMs; the next call succeeds", async () => {
    const body = readFileSync(path.join(GEO_FIXTURES, "rate-limit.json"), "utf8");
    h.provider.setFault({ path: ESUMMARY }, { status: 429, retryAfter: "1", body });
    expect(errorOf(await h.call("geo_search_studies", { query: GEO_FIXTURE_QUERY }))).toMatchObject({
      code: "rate_limited",
      status: 429,
      retryAfterMs: 1000,
    });
    expect(okResult(await h.call("geo_search_studies", { query: GEO_FIXTURE_QUERY })).records).toHaveLength(
      2,
    );
  });

  test.each([
    ["a 500 of ESearch", ESEARCH, { status: 500 }, { code: "upstream_unavailable", status: 500 }],
    [
      "a malformed ESummary",
      ESUMMARY,
      { malformed: true as const },
      { code: "upstream_unavailable", status: 200 },
    ],
  ])("%s is a structured error that does not echo the query", async (_name, where, fault, expected) => {
    h.provider.setFault({ path: where }, fault);
    const error = errorOf(await h.call("geo_search_studies", { query: GEO_FIXTURE_QUERY }));
    expect(error).toMatchObject(expected);
    expect(error.message).not.toContain("metastasis");
  });
});

describe("geo_lookup_accession", () => {
  test.each([
    "GSE900001",
    "gse900001",
    "GEO: GSE900001",
    "https://www.ncbi.nlm.nih.gov/geo/query/acc.cgi?acc=GSE900001",
    "ftp.ncbi.nlm.nih.gov/geo/series/GSE900nnn/GSE900001/suppl/",
  ])("%s is read with one ESummary of UID 200900001", async (accession) => {
    const result = okResult(await h.call("geo_lookup_accession", { accession }));
    expect(result.records.map((r) => r.identifier)).toEqual(["GSE900001"]);
    expect(result.data).toEqual({ accession: "GSE900001", entryType: "GSE" });
    expect(h.provider.requests.map((r) => [r.path, r.query.id])).toEqual([[ESUMMARY, "200900001"]]);
    expectUrlsOnManifestHosts(result, "geo");
  });

  test.each([
    ["GSM900011", "300900011", "gsm", "https://www.ncbi.nlm.nih.gov/geo/query/acc.cgi?acc=GSM900011"],
    ["GPL9001", "100009001", "gpl", "https://www.ncbi.nlm.nih.gov/geo/query/acc.cgi?acc=GPL9001"],
    ["GDS9001", "9001", "gds", "https://www.ncbi.nlm.nih.gov/sites/GDSbrowser?acc=GDS9001"],
  ])("%s is read by UID %s with its own page", async (accession, uid, type, url) => {
    const result = okResult(await h.call("geo_lookup_accession", { accession }));
    expect(result.records[0]).toMatchObject({ identifier: accession, identifierType: type, url });
    expect(requestsTo(ESUMMARY).map((r) => r.query.id)).toEqual([uid]);
    expectUrlsOnManifestHosts(result, "geo");
  });

  test("a sample links its series and platform", async () => {
    const [record] = okResult(await h.call("geo_lookup_accession", { accession: "GSM900011" })).records;
    expect(record?.crossReferences.map((x) => x.identifier)).toEqual(["GSE900001", "GPL24247"]);
    expect(record?.structuredData).toMatchObject({ series: ["GSE900001"], platforms: ["GPL24247"] });
    // An empty GEO summary is no abstract.
    expect(record?.abstract).toBeUndefined();
  });

  test("an accession outside the UID scheme is found through an [ACCN] search", async () => {
    const result = okResult(await h.call("geo_lookup_accession", { accession: "GSE900003" }));
    expect(result.records[0]?.identifier).toBe("GSE900003");
    expect(h.provider.requests.map((r) => [r.path, r.query.id ?? r.query.term])).toEqual([
      [ESUMMARY, "200900003"],
      [ESEARCH, "GSE900003[ACCN]"],
      [ESUMMARY, "200999003"],
    ]);
  });

  test("an unknown accession is not_found", async () => {
    expect(errorOf(await h.call("geo_lookup_accession", { accession: "GSE999999" }))).toMatchObject({
      code: "not_found",
    });
  });

  test.each(["GSE", "SRR1234567", "lung metastasis study", "https://example.org/geo/query/acc.cgi?acc=GSE1"])(
    "%s is invalid_id without any provider request",
    async (accession) => {
      const error = errorOf(await h.call("geo_lookup_accession", { accession }));
      expect(error.code).toBe("invalid_id");
      expect(error.message).not.toContain("metastasis");
      expect(h.provider.requests).toHaveLength(0);
    },
  );
});

describe("geo_list_files", () => {
  test("lists supplementary and matrix files with decoded names, HTTPS URLs, sizes and paging", async () => {
    const result = okResult(await h.call("geo_list_files", { accession: "GSE900001", max_results: 3 }));
    expect(result.records[0]?.identifier).toBe("GSE900001");
    expect(result.warnings).toEqual([]);
    expect(result.data).toMatchObject({
      accession: "GSE900001",
      total: 4,
      start: 0,
      returned: 3,
      hasMore: true,
      nextStart: 3,
    });
    expect(result.data?.files).toEqual([
      {
        name: "GSE900001_RAW.tar",
        folder: "suppl",
        url: `${GSE1_FOLDER}/suppl/GSE900001_RAW.tar`,
        format: "tar",
        modified: "2024-10-04 16:43",
        size: "1.2G",
      },
      {
        name: "GSE900001_counts+meta.csv.gz",
        folder: "suppl",
        url: `${GSE1_FOLDER}/suppl/GSE900001_counts%2Bmeta.csv.gz`,
        format: "csv.gz",
        modified: "2024-10-04 16:43",
        size: "45M",
      },
      {
        name: "filelist.txt",
        folder: "suppl",
        url: `${GSE1_FOLDER}/suppl/filelist.txt`,
        format: "txt",
        modified: "2024-10-04 16:43",
        size: "512",
        sizeBytes: 512,
      },
    ]);
    expect(ftpPaths()).toEqual([
      "/geo/ftp/series/GSE900nnn/GSE900001/suppl/",
      "/geo/ftp/series/GSE900nnn/GSE900001/matrix/",
    ]);
    expectUrlsOnManifestHosts(result, "geo");
  });

  test("the next page holds the series matrix", async () => {
    const result = okResult(await h.call("geo_list_files", { accession: "GSE900001", start: 3 }));
    expect((result.data?.files as { name: string }[] | undefined)?.map((f) => f.name)).toEqual([
      "GSE900001_series_matrix.txt.gz",
    ]);
    expect(result.data).toMatchObject({ total: 4, start: 3, returned: 1, hasMore: false });
  });

  test.each([
    ["a series whose suppl/ GEO will not list (403)", "GSE900002", 2, ["suppl/"]],
    ["a platform without suppl/ (404) but with annotation", "GPL9001", 1, ["suppl/"]],
    ["a sample", "GSM900011", 1, []],
    ["a curated dataset", "GDS9001", 2, []],
    ["a series with no folders at all", "GSE900003", 0, ["suppl/", "matrix/"]],
  ])("%s (%s) lists %i file(s)", async (_name, accession, count, unlisted) => {
    const result = okResult(await h.call("geo_list_files", { accession }));
    expect(result.data?.total).toBe(count);
    expect(result.warnings).toEqual(
      unlisted.length === 0
        ? []
        : [`GEO lists no ${unlisted.join(" or ")} folder for this record (absent or without files).`],
    );
  });

  test("an unknown accession is not_found before any FTP request", async () => {
    expect(errorOf(await h.call("geo_list_files", { accession: "GSE999999" }))).toMatchObject({
      code: "not_found",
    });
    expect(ftpPaths()).toEqual([]);
  });

  test.each([
    ["a 503 of the FTP site", { status: 503 }, { code: "upstream_unavailable", status: 503 }],
    [
      "a body that is no folder listing",
      { malformed: true as const },
      { code: "upstream_unavailable", status: 200 },
    ],
  ])("%s is a structured error", async (_name, fault, expected) => {
    h.provider.setFault({ path: "/geo/ftp/series/GSE900nnn/GSE900001/suppl/" }, fault);
    expect(errorOf(await h.call("geo_list_files", { accession: "GSE900001" }))).toMatchObject(expected);
  });
});

describe("geo_prepare_dataset_download", () => {
  test("without file names, every listed file becomes an HTTPS candidate; nothing is downloaded", async () => {
    const result = okResult(
      await h.call("geo_prepare_dataset_download", { accession: "GSE900001", files: "" }),
    );
    expect(result.artifacts?.[0]).toEqual({
      candidateId: "geo:GSE900001:suppl/GSE900001_RAW.tar",
      sourceId: "geo",
      sourceRecordId: "GSE900001",
      url: `${GSE1_FOLDER}/suppl/GSE900001_RAW.tar`,
      format: "tar",
      kind: "dataset",
      license:
        "NCBI places no restrictions on GEO data; submitters may hold patent, copyright or other rights",
      filename: "GSE900001_RAW.tar",
    });
    expect(result.artifacts?.map((a) => [a.filename, a.sizeBytes])).toEqual([
      ["GSE900001_RAW.tar", undefined],
      ["GSE900001_counts+meta.csv.gz", undefined],
      ["filelist.txt", 512],
      ["GSE900001_series_matrix.txt.gz", undefined],
    ]);
    expect(result.data).toEqual({ accession: "GSE900001", listed: 4, returned: 4, failed: [] });
    expect(h.provider.requests.every((r) => r.path === ESUMMARY || r.path.endsWith("/"))).toBe(true);
    expectUrlsOnManifestHosts(result, "geo");
  });

  test("named files (names or URLs) are chosen; the others are reported per item", async () => {
    const result = okResult(
      await h.call("geo_prepare_dataset_download", {
        accession: "GSE900001",
        files: [
          "GSE900001_series_matrix.txt.gz",
          `${GSE1_FOLDER}/suppl/GSE900001_counts%2Bmeta.csv.gz`,
          "missing.txt",
          "..",
        ],
      }),
    );
    expect(result.artifacts?.map((a) => [a.candidateId, a.format])).toEqual([
      ["geo:GSE900001:matrix/GSE900001_series_matrix.txt.gz", "txt.gz"],
      ["geo:GSE900001:suppl/GSE900001_counts+meta.csv.gz", "csv.gz"],
    ]);
    expect(result.data?.failed).toEqual([
      { id: "missing.txt", reason: "not_found" },
      { id: "..", reason: "invalid_id" },
    ]);
    expect(result.warnings).toEqual(["2 named file(s) failed; see data.failed."]);
    expectUrlsOnManifestHosts(result, "geo");
  });

  test("a curated dataset offers its SOFT files", async () => {
    const result = okResult(await h.call("geo_prepare_dataset_download", { accession: "GDS9001" }));
    expect(result.artifacts?.map((a) => a.url)).toEqual([
      "https://ftp.ncbi.nlm.nih.gov/geo/datasets/GDS9nnn/GDS9001/soft/GDS9001.soft.gz",
      "https://ftp.ncbi.nlm.nih.gov/geo/datasets/GDS9nnn/GDS9001/soft/GDS9001_full.soft.gz",
    ]);
    expectUrlsOnManifestHosts(result, "geo");
  });

  test.each([
    ["only unknown file names", { accession: "GSE900001", files: ["nope.txt"] }, "not_found"],
    ["a record without files", { accession: "GSE900003" }, "not_found"],
    ["an unknown record", { accession: "GDS999999" }, "not_found"],
    ["an invalid accession", { accession: "E-MTAB-1234" }, "invalid_id"],
  ])("%s is %s", async (_name, args, code) => {
    expect(errorOf(await h.call("geo_prepare_dataset_download", args))).toMatchObject({ code });
  });

  test("429 of the FTP site is rate_limited; the next call succeeds", async () => {
    h.provider.setFault({ path: /^\/geo\/ftp\// }, { status: 429, retryAfter: "2" });
    expect(errorOf(await h.call("geo_prepare_dataset_download", { accession: "GSM900011" }))).toMatchObject({
      code: "rate_limited",
      retryAfterMs: 2000,
    });
    const result = okResult(await h.call("geo_prepare_dataset_download", { accession: "GSM900011" }));
    expect(result.artifacts?.map((a) => a.url)).toEqual([
      "https://ftp.ncbi.nlm.nih.gov/geo/samples/GSM900nnn/GSM900011/suppl/GSM900011_TSF1a_counts.tsv.gz",
    ]);
  });
});

describe("GEO accessions and file formats", () => {
  test.each([
    ["GSE1", "200000001", "/series/GSEnnn/GSE1/"],
    ["GSE1234", "200001234", "/series/GSE1nnn/GSE1234/"],
    ["gsm7518067", "307518067", "/samples/GSM7518nnn/GSM7518067/"],
    ["GPL570", "100000570", "/platforms/GPLnnn/GPL570/"],
    ["GDS507", "507", "/datasets/GDSnnn/GDS507/"],
  ])("%s has UID %s and FTP folder %s", (input, uid, folder) => {
    const id = normalizeGeoAccession(input);
    expect(id && [geoUid(id), geoFtpFolder(id)]).toEqual([uid, folder]);
  });

  test.each([
    ["https://www.ncbi.nlm.nih.gov/sites/GDSbrowser?acc=GDS507", "GDS507"],
    ["GSE0", undefined],
    ["GSE12a", undefined],
    ["https://www.ebi.ac.uk/biostudies/arrayexpress/studies/GSE1234", undefined],
  ])("%s normalizes to %s", (input, expected) => {
    expect(normalizeGeoAccession(input)?.accession).toBe(expected);
  });

  test.each([
    ["GSE1_RAW.tar", "tar"],
    ["GSE1_counts.csv.gz", "csv.gz"],
    ["GSE1_family.soft.gz", "soft.gz"],
    ["matrix.h5", "h5"],
    ["archive.gz", "gz"],
    ["README", "file"],
  ])("%s has format %s", (name, format) => {
    expect(fileFormat(name)).toBe(format);
  });
});
