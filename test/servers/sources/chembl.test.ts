import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { normalizeChemblId, parseChemblStructure } from "../../../src/servers/sources/chembl/chembl-ids.js";
import {
  ASPIRIN_SMILES,
  CHEMBL_MOLECULE_QUERY,
  CHEMBL_TARGET_QUERY,
  chemblFakeRoutes,
  UNPARSEABLE_SMILES,
} from "../../fixtures/providers/chembl/routes.js";
import {
  errorOf,
  expectUrlsOnManifestHosts,
  okResult,
  readManifest,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const MOLECULE_SEARCH = "/chembl/api/molecule/search.json";
const ACTIVITY = "/chembl/api/activity.json";

let h: SourcesHarness;
beforeEach(async () => {
  h = await startSourcesHarness(chemblFakeRoutes(), {
    only: ["chembl"],
    env: { NCBI_API_KEY: "must-not-leak" },
  });
});
afterEach(() => h.close());

const paths = () => h.provider.requests.map((r) => r.path);

describe("ChEMBL identifiers", () => {
  test.each([
    ["CHEMBL25", "CHEMBL25"],
    [" chembl25 ", "CHEMBL25"],
    ["ChEMBL:CHEMBL25", "CHEMBL25"],
    ["chembl.compound:CHEMBL25", "CHEMBL25"],
    ["https://www.ebi.ac.uk/chembl/explore/target/CHEMBL203/", "CHEMBL203"],
    ["https://www.ebi.ac.uk/chembl/target_report_card/CHEMBL203/", "CHEMBL203"],
    ["https://www.ebi.ac.uk/chembl/api/data/molecule/CHEMBL25.json", "CHEMBL25"],
    ["https://identifiers.org/chembl.compound:CHEMBL25", "CHEMBL25"],
    ["CHEMBL0", undefined],
    ["CHEMBL25x", undefined],
    ["https://example.org/chembl/explore/compound/CHEMBL25", undefined],
    ["25", undefined],
  ])("normalizeChemblId(%j) is %j", (input, expected) => {
    expect(normalizeChemblId(input)).toBe(expected);
  });

  test.each([
    ["CHEMBL25", { type: "chembl-id", value: "CHEMBL25" }],
    ["BSYNRYMUTXBXSQ-UHFFFAOYSA-N", { type: "inchikey", value: "BSYNRYMUTXBXSQ-UHFFFAOYSA-N" }],
    ["C/C=C/C(=O)[O-].[Na+]", { type: "smiles", value: "C/C=C/C(=O)[O-].[Na+]" }],
    ["c1ccc2c(c1)cc[nH]2", { type: "smiles", value: "c1ccc2c(c1)cc[nH]2" }],
    ["aspirin tablets", undefined],
    ["12345", undefined],
    ["C".repeat(2001), undefined],
  ])("parseChemblStructure(%j) is %j", (input, expected) => {
    expect(parseChemblStructure(input)).toEqual(expected);
  });
});

describe("chembl_search_molecules", () => {
  test("returns structured compound records with names, phase, properties, structure ids and paging", async () => {
    const result = okResult(
      await h.call("chembl_search_molecules", { query: CHEMBL_MOLECULE_QUERY, max_results: 3, start: "" }),
    );
    const manifest = readManifest("chembl");
    expect(result).toMatchObject({
      sourceId: "chembl",
      toolId: "search_molecules",
      license: "CC-BY-SA-3.0",
      attribution: manifest.governance.attribution,
      warnings: [],
      data: { total: 14, start: 0, returned: 3, hasMore: true, nextStart: 3 },
    });
    const [imatinib, mesylate, unnamed] = result.records;
    expect(imatinib).toMatchObject({
      identifier: "CHEMBL941",
      identifierType: "chembl.compound",
      title: "IMATINIB",
      url: "https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL941",
      contentScope: "structured-record",
      fullTextRetrieved: false,
      primaryCitation: {
        label: "[CHEMBL941](https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL941)",
        url: "https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL941",
      },
      crossReferences: [
        {
          identifier: "CHEBI:45783",
          identifierType: "chebi",
          url: "https://www.ebi.ac.uk/chebi/searchId.do?chebiId=CHEBI:45783",
        },
        { identifier: "KTUFNOKKBVMGRW-UHFFFAOYSA-N", identifierType: "inchikey" },
      ],
      structuredData: {
        synonyms: ["Imatinib", "STI-571"],
        maxPhase: 4,
        firstApproval: 2001,
        formula: "C29H31N7O",
        molecularWeight: 493.62,
        alogp: 4.59,
        hbondDonors: 2,
        ro5Violations: 0,
        canonicalSmiles: "Cc1ccc(NC(=O)c2ccc(CN3CCN(C)CC3)cc2)cc1Nc1nccc(-c2cccnc2)n1",
        atcClassifications: ["L01EA01"],
        searchScore: 18,
      },
    });
    expect(imatinib?.abstract).toBeUndefined();
    expect(mesylate).toMatchObject({
      identifier: "CHEMBL1642",
      structuredData: { parentChemblId: "CHEMBL941", synonyms: ["Gleevec", "Imatinib mesylate"] },
      crossReferences: [
        { identifier: "CHEMBL941", url: "https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL941" },
        { identifier: "YLMAHDNUQAMNNX-UHFFFAOYSA-N", identifierType: "inchikey" },
      ],
    });
    // An unnamed research compound is titled by id and formula, not by a "no title" placeholder.
    expect(unnamed).toMatchObject({ title: "CHEMBL9900001 (C22H21N5O)", warnings: [] });
    expect(unnamed?.structuredData).not.toHaveProperty("maxPhase");
    expectUrlsOnManifestHosts(result, "chembl");
  });

  test("sends ChEMBL's search parameters as JSON requests with a User-Agent and no NCBI parameters", async () => {
    okResult(await h.call("chembl_search_molecules", { query: CHEMBL_MOLECULE_QUERY, start: 10 }));
    const [request] = h.provider.requests;
    expect(request?.path).toBe(MOLECULE_SEARCH);
    expect(request?.query).toEqual({ q: CHEMBL_MOLECULE_QUERY, limit: "10", offset: "10" });
    expect(request?.headers.accept).toBe("application/json");
    expect(request?.headers["user-agent"]).toMatch(/^sciencegate\//);
  });

  test("an empty result is a success with total 0", async () => {
    const result = okResult(await h.call("chembl_search_molecules", { query: "zzqxv" }));
    expect(result.records).toEqual([]);
    expect(result.data).toEqual({ total: 0, start: 0, returned: 0, hasMore: false });
  });

  test.each([
    ["a 502", { status: 502 }, { code: "upstream_unavailable", status: 502 }],
    ["a malformed body", { malformed: true as const }, { code: "upstream_unavailable", status: 200 }],
    [
      "a redirect",
      { redirectTo: "https://www.ebi.ac.uk/chembl/moved?q=imatinib" },
      { code: "upstream_unavailable", status: 302 },
    ],
  ])("%s is a structured error that does not echo the query", async (_name, fault, expected) => {
    h.provider.setFault({ path: MOLECULE_SEARCH }, fault);
    const error = errorOf(await h.call("chembl_search_molecules", { query: CHEMBL_MOLECULE_QUERY }));
    expect(error).toMatchObject(expected);
    expect(error.message).not.toContain(CHEMBL_MOLECULE_QUERY);
  });

  test("JSON without the molecules list is malformed, not an empty success", async () => {
    h.provider.setFault(
      { path: MOLECULE_SEARCH },
      { status: 200, body: '{"error_message": "busy"}', headers: { "content-type": "application/json" } },
    );
    expect(errorOf(await h.call("chembl_search_molecules", { query: "x" }))).toMatchObject({
      code: "upstream_unavailable",
    });
  });
});

describe("chembl_search_targets", () => {
  test("returns targets with UniProt components and gene symbols, filtered by organism", async () => {
    const result = okResult(
      await h.call("chembl_search_targets", { query: CHEMBL_TARGET_QUERY, organism: "homo sapiens" }),
    );
    expect(h.provider.requests[0]?.query).toMatchObject({
      q: CHEMBL_TARGET_QUERY,
      organism__iexact: "homo sapiens",
    });
    expect(result.data).toEqual({ total: 2, start: 0, returned: 2, hasMore: false });
    const [egfr, complex] = result.records;
    expect(egfr).toMatchObject({
      identifier: "CHEMBL203",
      identifierType: "chembl.target",
      title: "Epidermal growth factor receptor erbB1",
      url: "https://www.ebi.ac.uk/chembl/explore/target/CHEMBL203",
      contentScope: "structured-record",
      primaryCitation: { label: "[CHEMBL203](https://www.ebi.ac.uk/chembl/explore/target/CHEMBL203)" },
      crossReferences: [
        {
          identifier: "P00533",
          identifierType: "uniprot",
          url: "https://www.uniprot.org/uniprotkb/P00533/entry",
        },
      ],
      structuredData: {
        targetType: "SINGLE PROTEIN",
        organism: "Homo sapiens",
        taxId: 9606,
        components: [
          {
            accession: "P00533",
            description: "Epidermal growth factor receptor",
            type: "PROTEIN",
            relationship: "SINGLE PROTEIN",
            geneSymbols: ["EGFR"],
          },
        ],
      },
    });
    expect(complex?.crossReferences.map((x) => x.identifier)).toEqual(["P00533", "P04626"]);
    expectUrlsOnManifestHosts(result, "chembl");
  });

  test("a blank organism is ignored: every organism is searched", async () => {
    const result = okResult(
      await h.call("chembl_search_targets", { query: CHEMBL_TARGET_QUERY, organism: " " }),
    );
    expect(result.records.map((r) => r.structuredData?.organism)).toEqual([
      "Homo sapiens",
      "Mus musculus",
      "Homo sapiens",
    ]);
    expect(h.provider.requests[0]?.query).not.toHaveProperty("organism__iexact");
  });

  test("an empty result is a success with total 0", async () => {
    const result = okResult(await h.call("chembl_search_targets", { query: "no such target" }));
    expect(result).toMatchObject({ records: [], data: { total: 0, hasMore: false } });
  });
});

describe("chembl_search_activities", () => {
  test("lists a molecule's activities with standardized values, links and paging (id given as a URL)", async () => {
    const result = okResult(
      await h.call("chembl_search_activities", {
        molecule: "https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL941",
        max_results: 2,
      }),
    );
    expect(h.provider.requests[0]?.query).toEqual({
      molecule_chembl_id: "CHEMBL941",
      order_by: "activity_id",
      limit: "2",
      offset: "0",
    });
    expect(result.data).toEqual({ total: 4, start: 0, returned: 2, hasMore: true, nextStart: 2 });
    expect(result.records[0]).toMatchObject({
      identifier: "9100001",
      identifierType: "chembl.activity",
      title: "IC50 = 38 nM: IMATINIB on Tyrosine-protein kinase ABL1",
      url: "https://www.ebi.ac.uk/chembl/explore/assay/CHEMBL8800001",
      year: 2005,
      contentScope: "structured-record",
      primaryCitation: {
        label:
          "[ChEMBL activity 9100001 (assay CHEMBL8800001)](https://www.ebi.ac.uk/chembl/explore/assay/CHEMBL8800001)",
      },
      crossReferences: [
        { identifier: "CHEMBL941", identifierType: "chembl.compound" },
        { identifier: "CHEMBL1862", identifierType: "chembl.target" },
        { identifier: "CHEMBL8800001", url: "https://www.ebi.ac.uk/chembl/explore/assay/CHEMBL8800001" },
        { identifier: "CHEMBL7700001", url: "https://www.ebi.ac.uk/chembl/explore/document/CHEMBL7700001" },
        { identifier: "9100001", url: "https://www.ebi.ac.uk/chembl/api/data/activity/9100001" },
      ],
      structuredData: {
        standardType: "IC50",
        standardRelation: "=",
        standardValue: 38,
        standardUnits: "nM",
        pchemblValue: 7.42,
        publishedValue: 0.038,
        publishedUnits: "uM",
        assayType: "B",
        assayTypeDescription: "binding",
        targetOrganism: "Homo sapiens",
        documentJournal: "J. Med. Chem.",
      },
      warnings: [],
    });
    expectUrlsOnManifestHosts(result, "chembl");
  });

  test("the next page carries ChEMBL's validity flags as warnings and inactive results without values", async () => {
    const result = okResult(
      await h.call("chembl_search_activities", { molecule: "CHEMBL941", max_results: 2, start: 2 }),
    );
    expect(result.data).toEqual({ total: 4, start: 2, returned: 2, hasMore: false });
    const [flagged, inactive] = result.records;
    expect(flagged?.warnings).toEqual(["ChEMBL flags this value: Outside typical range."]);
    expect(inactive).toMatchObject({
      title: "Inhibition: Not Active: IMATINIB on Epidermal growth factor receptor erbB1",
      structuredData: { activityComment: "Not Active" },
    });
    expect(inactive?.structuredData).not.toHaveProperty("pchemblValue");
    expect(inactive).not.toHaveProperty("year");
  });

  test("combines molecule, target, activity type and minimum pChEMBL filters", async () => {
    const result = okResult(
      await h.call("chembl_search_activities", {
        molecule: "chembl941",
        target: "chembl.target:CHEMBL1862",
        activity_type: "ic50",
        min_pchembl: 7,
      }),
    );
    expect(h.provider.requests[0]?.query).toMatchObject({
      molecule_chembl_id: "CHEMBL941",
      target_chembl_id: "CHEMBL1862",
      standard_type__iexact: "ic50",
      pchembl_value__gte: "7",
    });
    expect(result.records.map((r) => r.identifier)).toEqual(["9100001"]);
  });

  test("a possible duplicate is flagged on the record", async () => {
    const result = okResult(await h.call("chembl_search_activities", { target: "CHEMBL221" }));
    expect(result.records[0]?.warnings).toEqual([
      "ChEMBL marks this value as a potential duplicate of one reported earlier.",
    ]);
  });

  test("no matching activities for a known target is an empty success with a warning", async () => {
    const result = okResult(
      await h.call("chembl_search_activities", { target: "CHEMBL1862", activity_type: "EC50" }),
    );
    expect(result.records).toEqual([]);
    expect(result.data).toMatchObject({ total: 0, hasMore: false });
    expect(result.warnings[0]).toMatch(/no activities matching these filters/);
    expect(paths()).toEqual([ACTIVITY, "/chembl/api/target/CHEMBL1862.json"]);
  });

  test("an id ChEMBL does not know is not_found", async () => {
    expect(errorOf(await h.call("chembl_search_activities", { molecule: "CHEMBL999999" }))).toMatchObject({
      code: "not_found",
      status: 404,
      message: "ChEMBL has no molecule CHEMBL999999.",
    });
  });

  test.each([
    ["a name instead of an id", { molecule: "aspirin" }, "invalid_id"],
    ["an invalid target id", { molecule: "CHEMBL25", target: "EGFR kinase" }, "invalid_id"],
    ["neither molecule nor target", { activity_type: "IC50" }, "invalid_input"],
    ["blank molecule and target", { molecule: "", target: "  " }, "invalid_input"],
  ])("%s is %s, without any provider request", async (_name, args, code) => {
    const error = errorOf(await h.call("chembl_search_activities", args));
    expect(error.code).toBe(code);
    expect(error.message).not.toContain("EGFR kinase");
    expect(h.provider.requests).toHaveLength(0);
  });
});

describe("chembl_similarity_search", () => {
  test("a SMILES goes in the query; hits come most similar first with their similarity", async () => {
    const result = okResult(await h.call("chembl_similarity_search", { structure: ASPIRIN_SMILES }));
    const [request] = h.provider.requests;
    expect(request?.path).toBe("/chembl/api/similarity.json");
    expect(request?.query).toEqual({ smiles: ASPIRIN_SMILES, similarity: "70", limit: "10", offset: "0" });
    expect(result.data).toEqual({
      total: 3,
      start: 0,
      returned: 3,
      hasMore: false,
      threshold: 70,
      structureType: "smiles",
    });
    expect(result.records.map((r) => [r.identifier, r.title, r.structuredData?.similarity])).toEqual([
      ["CHEMBL25", "ASPIRIN", 100],
      ["CHEMBL9900002", "CHEMBL9900002 (C10H10O4)", 85.71],
      ["CHEMBL9900003", "Hydroxyaspirin", 72],
    ]);
    expectUrlsOnManifestHosts(result, "chembl");
  });

  test.each([
    [
      "a ChEMBL page URL",
      "https://www.ebi.ac.uk/chembl/compound_report_card/CHEMBL25/",
      "CHEMBL25",
      "chembl-id",
    ],
    ["an InChIKey", "BSYNRYMUTXBXSQ-UHFFFAOYSA-N", "BSYNRYMUTXBXSQ-UHFFFAOYSA-N", "inchikey"],
  ])("%s goes in the path form with the threshold", async (_name, structure, key, type) => {
    const result = okResult(await h.call("chembl_similarity_search", { structure, threshold: 80 }));
    expect(paths()).toEqual([`/chembl/api/similarity/${key}/80.json`]);
    expect(result.records.map((r) => r.identifier)).toEqual(["CHEMBL25", "CHEMBL9900002"]);
    expect(result.data).toMatchObject({ threshold: 80, structureType: type });
  });

  test("a ChEMBL id ChEMBL does not know is not_found", async () => {
    expect(errorOf(await h.call("chembl_similarity_search", { structure: "CHEMBL999999" }))).toMatchObject({
      code: "not_found",
      status: 404,
    });
  });

  test("text that is no structure is invalid_id without a request; one ChEMBL cannot parse is invalid_id 400", async () => {
    const text = errorOf(await h.call("chembl_similarity_search", { structure: "aspirin tablets 100 mg" }));
    expect(text.code).toBe("invalid_id");
    expect(text.message).not.toContain("aspirin tablets");
    expect(h.provider.requests).toHaveLength(0);
    const parsed = errorOf(await h.call("chembl_similarity_search", { structure: UNPARSEABLE_SMILES }));
    expect(parsed).toMatchObject({ code: "invalid_id", status: 400 });
    expect(parsed.message).not.toContain(UNPARSEABLE_SMILES);
  });

  test("a threshold below 40 is rejected by the input schema before any request", async () => {
    const result = await h.call("chembl_similarity_search", { structure: ASPIRIN_SMILES, threshold: 30 });
    expect(result.isError).toBe(true);
    expect(h.provider.requests).toHaveLength(0);
  });
});

describe.each([
  ["chembl_search_molecules", { query: CHEMBL_MOLECULE_QUERY }],
  ["chembl_search_targets", { query: CHEMBL_TARGET_QUERY }],
  ["chembl_search_activities", { molecule: "CHEMBL941" }],
  ["chembl_similarity_search", { structure: ASPIRIN_SMILES }],
  ["chembl_get_mechanisms", { molecule: "CHEMBL941" }],
])("%s upstream failures", (tool, args) => {
  test("429 comes back as rate_limited with retryAfterMs, not retried by the server; the next call succeeds", async () => {
    h.provider.setFault(() => true, { status: 429, retryAfter: "2" });
    expect(errorOf(await h.call(tool, args))).toEqual({
      code: "rate_limited",
      status: 429,
      retryAfterMs: 2000,
      message: expect.any(String),
    });
    expect(h.provider.requests).toHaveLength(1);
    expect(okResult(await h.call(tool, args)).records.length).toBeGreaterThan(0);
  });

  test("a 503 is upstream_unavailable with its status", async () => {
    h.provider.setFault(() => true, { status: 503 });
    expect(errorOf(await h.call(tool, args))).toMatchObject({ code: "upstream_unavailable", status: 503 });
  });
});
