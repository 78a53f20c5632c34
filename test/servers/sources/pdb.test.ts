import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { normalizePdbId } from "../../../src/servers/sources/pdb/pdb-ids.js";
import { PDB_FIXTURE_QUERY, PDB_FIXTURES, pdbFakeRoutes } from "../../fixtures/providers/pdb/routes.js";
import {
  errorOf,
  expectUrlsOnManifestHosts,
  okResult,
  readManifest,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const SEARCH = "/pdb/search/query";
const GRAPHQL = "/pdb/data/graphql";
const entryPath = (id: string) => `/pdb/data/rest/v1/core/entry/${id}`;

let h: SourcesHarness;
beforeEach(async () => {
  h = await startSourcesHarness(pdbFakeRoutes(), { only: ["pdb"] });
});
afterEach(() => h.close());

describe("pdb_search_structures", () => {
  test("returns described entries in hit order with citations, cross-references, scores and paging", async () => {
    const result = okResult(
      await h.call("pdb_search_structures", { query: PDB_FIXTURE_QUERY, max_results: 3 }),
    );
    const manifest = readManifest("pdb");
    expect(result).toMatchObject({
      sourceId: "pdb",
      toolId: "search_structures",
      license: "CC0-1.0",
      attribution: manifest.governance.attribution,
      data: { total: 57, start: 0, returned: 3, hasMore: true, nextStart: 3 },
    });
    const [hemoglobin, oxy, bare] = result.records;
    expect(hemoglobin).toMatchObject({
      identifier: "4HHB",
      identifierType: "pdb",
      title: "THE CRYSTAL STRUCTURE OF HUMAN DEOXYHAEMOGLOBIN AT 1.74 ANGSTROMS RESOLUTION",
      url: "https://www.rcsb.org/structure/4HHB",
      authors: ["Fermi, G.", "Perutz, M.F."],
      year: 1984,
      contentScope: "structured-record",
      fullTextRetrieved: false,
      primaryCitation: { label: "[PDB:4HHB](https://www.rcsb.org/structure/4HHB)" },
      crossReferences: [
        {
          identifier: "10.2210/pdb4hhb/pdb",
          identifierType: "doi",
          url: "https://doi.org/10.2210/pdb4hhb/pdb",
        },
        { identifier: "10.1016/0022-2836(84)90472-8", identifierType: "doi" },
        { identifier: "6726807", identifierType: "pmid", url: "https://pubmed.ncbi.nlm.nih.gov/6726807/" },
      ],
      structuredData: {
        extendedId: "pdb_00004hhb",
        experimentalMethods: ["X-RAY DIFFRACTION"],
        resolutionAngstrom: 1.74,
        keywords: "OXYGEN TRANSPORT",
        depositDate: "1984-03-07",
        releaseDate: "1984-07-17",
        pdbFormatAvailable: true,
        searchScore: 1,
        primaryCitation: { journal: "J Mol Biol", year: 1984, pmid: "6726807" },
      },
      warnings: [],
    });
    expect(oxy).toMatchObject({ identifier: "2DN1", structuredData: { searchScore: 0.9871 } });
    // A hit RCSB could not describe keeps its id, honestly scoped as metadata.
    expect(bare).toMatchObject({
      identifier: "9ZZ9",
      title: "[PDB:9ZZ9: no title]",
      contentScope: "metadata",
      url: "https://www.rcsb.org/structure/9ZZ9",
    });
    expect(result.warnings).toEqual(["1 hit(s) had no entry description at RCSB; they carry the id only."]);
    expectUrlsOnManifestHosts(result, "pdb");
  });

  test("sends one full-text Search API query and one GraphQL request for the hits", async () => {
    okResult(await h.call("pdb_search_structures", { query: PDB_FIXTURE_QUERY, max_results: 3, start: 6 }));
    expect(h.provider.requests.map((r) => [r.method, r.path])).toEqual([
      ["POST", SEARCH],
      ["POST", GRAPHQL],
    ]);
    const [search, graphql] = h.provider.requests;
    expect(JSON.parse(search?.body ?? "")).toEqual({
      query: { type: "terminal", service: "full_text", parameters: { value: PDB_FIXTURE_QUERY } },
      return_type: "entry",
      request_options: { paginate: { start: 6, rows: 3 }, sort: [{ sort_by: "score", direction: "desc" }] },
    });
    expect(search?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(graphql?.body ?? "").variables).toEqual({ ids: ["4HHB", "2DN1", "9ZZ9"] });
  });

  test("the last page has no nextStart", async () => {
    const result = okResult(await h.call("pdb_search_structures", { query: PDB_FIXTURE_QUERY, start: 54 }));
    expect(result.data).toEqual({ total: 57, start: 54, returned: 3, hasMore: false });
  });

  test("no hits (HTTP 204 without a body) is an empty success with total 0 and no GraphQL request", async () => {
    const result = okResult(await h.call("pdb_search_structures", { query: "zzqxv", start: "" }));
    expect(result.records).toEqual([]);
    expect(result.data).toEqual({ total: 0, start: 0, returned: 0, hasMore: false });
    expect(h.provider.requests.map((r) => r.path)).toEqual([SEARCH]);
  });

  test("a query the Search API rejects (HTTP 400) is invalid_input without the query in the message", async () => {
    const body = readFileSync(path.join(PDB_FIXTURES, "error-bad-query.json"), "utf8");
    h.provider.setFault({ path: SEARCH }, { status: 400, body });
    const error = errorOf(await h.call("pdb_search_structures", { query: PDB_FIXTURE_QUERY }));
    expect(error).toMatchObject({ code: "invalid_input", status: 400 });
    expect(error.message).not.toContain(PDB_FIXTURE_QUERY);
  });

  test("429 comes back as rate_limited with retryAfterMs and is not retried by the server; the next call succeeds", async () => {
    h.provider.setFault({ path: SEARCH }, { status: 429, retryAfter: "2" });
    expect(errorOf(await h.call("pdb_search_structures", { query: PDB_FIXTURE_QUERY }))).toEqual({
      code: "rate_limited",
      status: 429,
      retryAfterMs: 2000,
      message: expect.any(String),
    });
    expect(h.provider.requests).toHaveLength(1);
    expect(
      okResult(await h.call("pdb_search_structures", { query: PDB_FIXTURE_QUERY })).records,
    ).toHaveLength(3);
  });

  test.each([
    ["a 500 of the Search API", SEARCH, { status: 500 }, { code: "upstream_unavailable", status: 500 }],
    ["a 503 of the Data API", GRAPHQL, { status: 503 }, { code: "upstream_unavailable", status: 503 }],
    [
      "a malformed search body",
      SEARCH,
      { malformed: true as const },
      { code: "upstream_unavailable", status: 200 },
    ],
    [
      "a GraphQL error answer",
      GRAPHQL,
      { status: 200, body: '{"errors":[{"message":"boom"}]}' },
      { code: "upstream_unavailable", status: 200 },
    ],
  ])("%s is a structured error, never an empty success", async (_name, where, fault, expected) => {
    h.provider.setFault({ path: where }, fault);
    const error = errorOf(await h.call("pdb_search_structures", { query: PDB_FIXTURE_QUERY }));
    expect(error).toMatchObject(expected);
    expect(error.message).not.toContain(PDB_FIXTURE_QUERY);
  });
});

describe("pdb_lookup_structure", () => {
  test.each([
    ["a classic id", "4hhb"],
    ["an extended id", "pdb_00004hhb"],
    ["an rcsb.org URL", "https://www.rcsb.org/structure/4HHB"],
    ["the entry DOI", "https://doi.org/10.2210/pdb4hhb/pdb"],
  ])("%s reads the REST core entry of 4HHB", async (_name, id) => {
    const result = okResult(await h.call("pdb_lookup_structure", { id }));
    expect(h.provider.requests.map((r) => r.path)).toEqual([entryPath("4HHB")]);
    expect(result.data).toEqual({ id: "4HHB", extendedId: "pdb_00004hhb" });
    expect(result.records[0]).toMatchObject({
      identifier: "4HHB",
      structuredData: { primaryCitation: { doi: "10.1016/0022-2836(84)90472-8", pmid: "6726807" } },
    });
    expect(result.records[0]?.crossReferences.map((x) => x.identifierType)).toEqual(["doi", "doi", "pmid"]);
    expectUrlsOnManifestHosts(result, "pdb");
  });

  test("an NMR entry has no resolution and no primary citation", async () => {
    const result = okResult(await h.call("pdb_lookup_structure", { id: "2L05" }));
    expect(result.records[0]?.structuredData).toMatchObject({ experimentalMethods: ["SOLUTION NMR"] });
    expect(result.records[0]?.structuredData).not.toHaveProperty("resolutionAngstrom");
    expect(result.records[0]?.structuredData).not.toHaveProperty("primaryCitation");
  });

  test("an unknown entry is not_found", async () => {
    expect(errorOf(await h.call("pdb_lookup_structure", { id: "9ZZ9" }))).toMatchObject({
      code: "not_found",
      status: 404,
      message: "RCSB PDB has no released entry 9ZZ9.",
    });
  });

  test("an invalid id is invalid_id, without any provider request", async () => {
    expect(errorOf(await h.call("pdb_lookup_structure", { id: "hemoglobin" }))).toMatchObject({
      code: "invalid_id",
    });
    expect(h.provider.requests).toHaveLength(0);
  });

  test("429 then success, and a 502", async () => {
    h.provider.setFault({ path: entryPath("4HHB") }, { status: 429, retryAfter: "1" });
    expect(errorOf(await h.call("pdb_lookup_structure", { id: "4HHB" }))).toMatchObject({
      code: "rate_limited",
      retryAfterMs: 1000,
    });
    expect(okResult(await h.call("pdb_lookup_structure", { id: "4HHB" })).records).toHaveLength(1);
    h.provider.setFault({ path: entryPath("4HHB") }, { status: 502 });
    expect(errorOf(await h.call("pdb_lookup_structure", { id: "4HHB" }))).toMatchObject({
      code: "upstream_unavailable",
      status: 502,
    });
  });
});

describe("pdb_prepare_structure_download", () => {
  test.each([
    ["cif", { id: "PDB:4HHB", format: "" }, "cif"],
    ["pdb", { id: "4HHB_A", format: "pdb" }, "pdb"],
  ])(
    "gives the %s candidate on files.rcsb.org with the CC0 licence and downloads nothing",
    async (_n, args, format) => {
      const result = okResult(await h.call("pdb_prepare_structure_download", args));
      expect(result.artifacts).toEqual([
        {
          candidateId: `pdb:4HHB:${format}`,
          sourceId: "pdb",
          sourceRecordId: "4HHB",
          url: `https://files.rcsb.org/download/4HHB.${format}`,
          format,
          kind: "structure",
          license: "CC0-1.0",
          filename: `4HHB.${format}`,
        },
      ]);
      expect(result.data).toEqual({ id: "4HHB", format });
      expect(h.provider.requests.map((r) => r.path)).toEqual([entryPath("4HHB")]);
      expectUrlsOnManifestHosts(result, "pdb");
    },
  );

  test("a large structure is offered as cif but not in the legacy PDB format", async () => {
    const cif = okResult(await h.call("pdb_prepare_structure_download", { id: "6qzp" }));
    expect(cif.artifacts?.[0]?.url).toBe("https://files.rcsb.org/download/6QZP.cif");
    const error = errorOf(await h.call("pdb_prepare_structure_download", { id: "6QZP", format: "pdb" }));
    expect(error).toMatchObject({ code: "invalid_input" });
    expect(error.message).toMatch(/too large for the legacy PDB format; ask for format cif/);
  });

  test.each([
    ["an unknown entry", "9ZZ9", "not_found"],
    ["an invalid id", "4HH", "invalid_id"],
  ])("%s (%s) is %s", async (_name, id, code) => {
    expect(errorOf(await h.call("pdb_prepare_structure_download", { id }))).toMatchObject({ code });
  });
});

describe("PDB identifiers", () => {
  test.each([
    ["4HHB", "4HHB", "pdb_00004hhb"],
    ["4hhb", "4HHB", "pdb_00004hhb"],
    ["PDB:4HHB", "4HHB", "pdb_00004hhb"],
    ["pdb 1abc", "1ABC", "pdb_00001abc"],
    ["pdb_00004hhb", "4HHB", "pdb_00004hhb"],
    ["PDB_00004HHB", "4HHB", "pdb_00004hhb"],
    ["pdb_00012abc", "PDB_00012ABC", "pdb_00012abc"],
    ["4HHB_A", "4HHB", "pdb_00004hhb"],
    ["4HHB.B", "4HHB", "pdb_00004hhb"],
    ["10.2210/pdb4hhb/pdb", "4HHB", "pdb_00004hhb"],
    ["https://www.rcsb.org/structure/4HHB", "4HHB", "pdb_00004hhb"],
    ["https://files.rcsb.org/download/4hhb.cif", "4HHB", "pdb_00004hhb"],
    ["https://www.ebi.ac.uk/pdbe/entry/pdb/4hhb", "4HHB", "pdb_00004hhb"],
    ["https://identifiers.org/pdb:4HHB", "4HHB", "pdb_00004hhb"],
  ])("%s is %s (%s)", (input, id, extendedId) => {
    expect(normalizePdbId(input)).toEqual({ id, extendedId });
  });

  test.each([
    "4HH",
    "0ABC",
    "hemoglobin",
    "pdb_0004hhb",
    "10.1016/0022-2836(84)90472-8",
    "https://example.org/structure/4HHB",
  ])("%s is not a PDB id", (input) => {
    expect(normalizePdbId(input)).toBeUndefined();
  });
});
