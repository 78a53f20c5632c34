import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { normalizeUniprotAccession } from "../../../src/servers/sources/uniprot/uniprot-ids.js";
import { nextCursorOf, uniprotPaging } from "../../../src/servers/sources/uniprot/uniprot-paging.js";
import {
  UNIPROT_FIXTURE_QUERY,
  UNIPROT_NEXT_CURSOR,
  uniprotFakeRoutes,
} from "../../fixtures/providers/uniprot/routes.js";
import {
  errorOf,
  expectUrlsOnManifestHosts,
  okResult,
  readManifest,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const SEARCH = "/uniprot/rest/uniprotkb/search";
const ACCESSIONS = "/uniprot/rest/uniprotkb/accessions";

let h: SourcesHarness;
beforeEach(async () => {
  h = await startSourcesHarness(uniprotFakeRoutes(), {
    only: ["uniprot"],
    env: { NCBI_API_KEY: "must-not-leak" },
  });
});
afterEach(() => h.close());

describe("uniprot_search", () => {
  test("returns entry records with versioned citations, PDB/AlphaFold links, honest scope and the total", async () => {
    const result = okResult(await h.call("uniprot_search", { query: UNIPROT_FIXTURE_QUERY, max_results: 2 }));
    const manifest = readManifest("uniprot");
    expect(result).toMatchObject({
      sourceId: "uniprot",
      toolId: "search",
      license: "CC-BY-4.0",
      attribution: manifest.governance.attribution,
    });
    const [braf, zebrafish] = result.records;
    expect(braf).toMatchObject({
      identifier: "P15056",
      identifierType: "uniprot",
      title: "Serine/threonine-protein kinase B-raf",
      url: "https://www.uniprot.org/uniprotkb/P15056/entry",
      contentScope: "structured-record",
      fullTextRetrieved: false,
      primaryCitation: {
        // The entry page shows the current version; UniSave serves version 262, the one read.
        label:
          "[UniProtKB:P15056 (entry version 262)](https://rest.uniprot.org/unisave/P15056?format=txt&versions=262)",
        url: "https://rest.uniprot.org/unisave/P15056?format=txt&versions=262",
        version: "262",
      },
      structuredData: {
        entryName: "BRAF_HUMAN",
        reviewed: true,
        alternativeNames: ["Proto-oncogene B-Raf", "p94"],
        genes: ["BRAF"],
        geneSynonyms: ["BRAF1", "RAFB1"],
        organism: { scientificName: "Homo sapiens", commonName: "Human", taxonId: 9606 },
        sequenceLength: 766,
        proteinExistence: "1: Evidence at protein level",
        entryVersion: 262,
        sequenceVersion: 4,
        pdbStructureCount: 27,
      },
      warnings: ["Only the first 25 of 27 PDB cross-references are listed."],
    });
    expect(braf?.abstract).toBeUndefined();
    // Provider text is passed on verbatim as data.
    expect(braf?.structuredData?.function).toContain("nucleus & phosphorylates MAP2K1 <in vitro>.");
    expect(braf?.crossReferences).toHaveLength(26);
    expect(braf?.crossReferences[0]).toEqual({
      identifier: "1UWH",
      identifierType: "pdb",
      url: "https://www.rcsb.org/structure/1UWH",
    });
    expect(braf?.crossReferences.at(-1)).toEqual({
      identifier: "P15056",
      identifierType: "alphafold",
      url: "https://alphafold.ebi.ac.uk/entry/P15056",
    });
    expect(zebrafish).toMatchObject({
      identifier: "A0A2R8Y4K1",
      title: "B-Raf proto-oncogene, serine/threonine kinase b",
      structuredData: { reviewed: false, organism: { taxonId: 7955 } },
      warnings: ["Unreviewed UniProtKB/TrEMBL entry: its annotation is computed, not curated."],
      crossReferences: [],
    });
    expectUrlsOnManifestHosts(result, "uniprot");
  });

  test("paging: the total and the next cursor come from the X-Total-Results and Link headers", async () => {
    const result = okResult(await h.call("uniprot_search", { query: UNIPROT_FIXTURE_QUERY, max_results: 2 }));
    expect(result.data).toEqual({ total: 23, returned: 2, hasMore: true, nextCursor: UNIPROT_NEXT_CURSOR });
    expect(result.warnings).toEqual([]);
  });

  test("sends the query with its filters, the field list, the facet and the cursor; no NCBI parameters", async () => {
    okResult(
      await h.call("uniprot_search", {
        query: UNIPROT_FIXTURE_QUERY,
        reviewed_only: true,
        organism_id: 9606,
        cursor: UNIPROT_NEXT_CURSOR,
      }),
    );
    const [request] = h.provider.requests;
    expect(request?.query).toEqual({
      query: `(${UNIPROT_FIXTURE_QUERY}) AND (reviewed:true) AND (organism_id:9606)`,
      fields: expect.stringMatching(/^accession,id,.*,xref_pdb,xref_alphafolddb$/),
      format: "json",
      size: "10",
      facets: "reviewed",
      cursor: UNIPROT_NEXT_CURSOR,
    });
    expect(request?.headers["user-agent"]).toMatch(/^sciencegate\//);
    expect(request?.headers.accept).toBe("application/json");
  });

  test("empty optional strings count as absent", async () => {
    okResult(
      await h.call("uniprot_search", {
        query: UNIPROT_FIXTURE_QUERY,
        reviewed_only: "",
        organism_id: "",
        cursor: "",
        max_results: "",
      }),
    );
    const [request] = h.provider.requests;
    expect(request?.query.query).toBe(`(${UNIPROT_FIXTURE_QUERY})`);
    expect(request?.query.cursor).toBeUndefined();
    expect(request?.query.size).toBe("10");
  });

  test("an empty result is a success with total 0 and no warning", async () => {
    const result = okResult(await h.call("uniprot_search", { query: "zzqxv" }));
    expect(result.records).toEqual([]);
    expect(result.data).toEqual({ total: 0, returned: 0, hasMore: false });
    expect(result.warnings).toEqual([]);
  });

  test("an entry of an unexpected shape is left out with a warning, the others are kept", async () => {
    const body = JSON.stringify({
      results: [
        { uniProtkbId: "NO_ACCESSION" },
        { primaryAccession: "q9y6k9", entryType: "UniProtKB reviewed (Swiss-Prot)" },
      ],
    });
    h.provider.setFault({ path: SEARCH }, { status: 200, body });
    const result = okResult(await h.call("uniprot_search", { query: UNIPROT_FIXTURE_QUERY, max_results: 5 }));
    expect(result.records.map((r) => [r.identifier, r.title])).toEqual([
      ["Q9Y6K9", "[UniProtKB:Q9Y6K9: no title]"],
    ]);
    expect(result.data).toEqual({ returned: 1, hasMore: false });
    expect(result.warnings).toEqual([
      "1 entry record(s) of the answer had an unexpected shape and were left out.",
    ]);
  });

  test("a query UniProt rejects (HTTP 400) is invalid_input without the query in the message", async () => {
    const error = errorOf(await h.call("uniprot_search", { query: "badfield:secretterm" }));
    expect(error).toMatchObject({ code: "invalid_input", status: 400 });
    expect(error.message).not.toContain("secretterm");
  });

  test("429 comes back as rate_limited with retryAfterMs and is not retried by the server; the next call succeeds", async () => {
    h.provider.setFault({ path: SEARCH }, { status: 429, retryAfter: "4" });
    expect(errorOf(await h.call("uniprot_search", { query: UNIPROT_FIXTURE_QUERY }))).toEqual({
      code: "rate_limited",
      status: 429,
      retryAfterMs: 4000,
      message: expect.any(String),
    });
    expect(h.provider.requests).toHaveLength(1);
    expect(okResult(await h.call("uniprot_search", { query: UNIPROT_FIXTURE_QUERY })).records).toHaveLength(
      2,
    );
  });

  test.each([
    ["a 503", { status: 503 }, { code: "upstream_unavailable", status: 503 }],
    ["a malformed body", { malformed: true as const }, { code: "upstream_unavailable", status: 200 }],
    [
      "a JSON body without results",
      { status: 200, body: '{"messages":[]}' },
      { code: "upstream_unavailable" },
    ],
  ])("%s is a structured error that does not echo the query", async (_name, fault, expected) => {
    h.provider.setFault({ path: SEARCH }, fault);
    const error = errorOf(await h.call("uniprot_search", { query: UNIPROT_FIXTURE_QUERY }));
    expect(error).toMatchObject(expected);
    expect(error.message).not.toContain("braf");
  });
});

describe("uniprot_lookup", () => {
  test("normalizes accessions and reports invalid, obsolete and unknown ones per item", async () => {
    const result = okResult(
      await h.call("uniprot_lookup", {
        accessions: [
          "UniProtKB:P15056",
          "https://www.uniprot.org/uniprotkb/A0A2R8Y4K1/entry",
          "p15056-2",
          "Q5U0Z1",
          "P99999",
          "not an accession",
          "B6HY61",
        ],
      }),
    );
    expect(result.records.map((r) => r.identifier)).toEqual(["P15056", "A0A2R8Y4K1"]);
    expect(result.data).toEqual({
      requested: 7,
      returned: 2,
      failed: [
        { id: "not an accession", reason: "invalid_id" },
        { id: "Q5U0Z1", reason: "obsolete", replacedBy: ["P15056"] },
        { id: "P99999", reason: "not_found" },
      ],
    });
    expect(result.warnings).toEqual([
      "P15056-2 is an isoform; the record describes entry P15056.",
      "B6HY61 is a secondary accession of P15056; its entry is returned.",
      "3 of 7 accession(s) failed; see data.failed.",
    ]);
    expect(h.provider.requests.map((r) => r.query.accessions)).toEqual([
      "P15056,A0A2R8Y4K1,Q5U0Z1,P99999,B6HY61",
    ]);
    expectUrlsOnManifestHosts(result, "uniprot");
  });

  test.each([
    ["an accession UniProt does not know", ["P99999"]],
    ["a deleted entry", ["B2R5X1"]],
  ])("%s is not_found", async (_name, accessions) => {
    expect(errorOf(await h.call("uniprot_lookup", { accessions }))).toMatchObject({ code: "not_found" });
  });

  test("only invalid accessions is invalid_id, without any provider request", async () => {
    expect(errorOf(await h.call("uniprot_lookup", { accessions: ["abc", "12345"] }))).toMatchObject({
      code: "invalid_id",
    });
    expect(h.provider.requests).toHaveLength(0);
  });

  test("429 then success", async () => {
    h.provider.setFault({ path: ACCESSIONS }, { status: 429 });
    expect(errorOf(await h.call("uniprot_lookup", { accessions: ["P15056"] }))).toMatchObject({
      code: "rate_limited",
      status: 429,
    });
    expect(okResult(await h.call("uniprot_lookup", { accessions: ["P15056"] })).records).toHaveLength(1);
  });
});

describe("uniprot_prepare_sequence", () => {
  test("gives the FASTA candidate on rest.uniprot.org with the CC BY licence and downloads nothing", async () => {
    const result = okResult(
      await h.call("uniprot_prepare_sequence", { accession: "sp|P15056|BRAF_HUMAN", format: "" }),
    );
    expect(result.artifacts).toEqual([
      {
        candidateId: "uniprot:P15056:fasta",
        sourceId: "uniprot",
        sourceRecordId: "P15056",
        url: "https://rest.uniprot.org/uniprotkb/P15056.fasta",
        format: "fasta",
        kind: "sequence",
        license: "CC-BY-4.0",
        filename: "P15056.fasta",
      },
    ]);
    expect(result.data).toEqual({
      accession: "P15056",
      format: "fasta",
      entryVersion: 262,
      sequenceVersion: 4,
      sequenceLength: 766,
    });
    expect(result.warnings).toEqual([]);
    expect(h.provider.requests.map((r) => [r.path, r.query.accessions])).toEqual([[ACCESSIONS, "P15056"]]);
    expectUrlsOnManifestHosts(result, "uniprot");
  });

  test("the flat file of a versioned accession says that the current sequence version differs", async () => {
    const result = okResult(
      await h.call("uniprot_prepare_sequence", { accession: "P15056.3", format: "txt" }),
    );
    expect(result.artifacts?.[0]).toMatchObject({
      url: "https://rest.uniprot.org/uniprotkb/P15056.txt",
      format: "txt",
      filename: "P15056.txt",
    });
    expect(result.warnings).toEqual([
      "The current sequence of P15056 is version 4, not 3; older versions are only in the UniSave archive.",
    ]);
  });

  test("an isoform is confirmed as its own entry and gets its own FASTA", async () => {
    const result = okResult(
      await h.call("uniprot_prepare_sequence", {
        accession: "https://www.uniprot.org/uniprotkb/P15056-2/entry",
      }),
    );
    expect(h.provider.requests[0]?.query.accessions).toBe("P15056-2");
    expect(result.records[0]).toMatchObject({
      identifier: "P15056-2",
      url: "https://www.uniprot.org/uniprotkb/P15056-2/entry",
    });
    expect(result.artifacts?.[0]).toMatchObject({
      candidateId: "uniprot:P15056-2:fasta",
      url: "https://rest.uniprot.org/uniprotkb/P15056-2.fasta",
    });
    expectUrlsOnManifestHosts(result, "uniprot");
  });

  test.each([
    ["an isoform as flat file", { accession: "P15056-2", format: "txt" }, "invalid_input", /ask for fasta/],
    ["an unknown accession", { accession: "P99999" }, "not_found", /P99999 is unknown/],
    ["a merged accession", { accession: "Q5U0Z1" }, "not_found", /obsolete \(replaced by P15056\)/],
    ["an invalid accession", { accession: "xyz" }, "invalid_id", /not a UniProtKB accession/],
  ])("%s is %s", async (_name, args, code, message) => {
    const error = errorOf(await h.call("uniprot_prepare_sequence", args));
    expect(error).toMatchObject({ code });
    expect(error.message).toMatch(message);
  });

  test("a 502 is upstream_unavailable", async () => {
    h.provider.setFault({ path: ACCESSIONS }, { status: 502 });
    expect(errorOf(await h.call("uniprot_prepare_sequence", { accession: "P15056" }))).toMatchObject({
      code: "upstream_unavailable",
      status: 502,
    });
  });
});

describe("UniProt identifiers", () => {
  test.each([
    ["P15056", { accession: "P15056" }],
    [" p15056 ", { accession: "P15056" }],
    ["UniProtKB:P15056", { accession: "P15056" }],
    ["uniprot:A0A2R8Y4K1", { accession: "A0A2R8Y4K1" }],
    ["UniProtKB/Swiss-Prot:P15056", { accession: "P15056" }],
    [">sp|P15056|BRAF_HUMAN", { accession: "P15056" }],
    ["tr|A0A2R8Y4K1|A0A2R8Y4K1_DANRE", { accession: "A0A2R8Y4K1" }],
    ["P15056-2", { accession: "P15056", isoform: 2 }],
    ["P15056.3", { accession: "P15056", version: 3 }],
    ["https://www.uniprot.org/uniprotkb/P15056/entry", { accession: "P15056" }],
    ["https://www.uniprot.org/uniprot/P15056.fasta", { accession: "P15056" }],
    ["https://rest.uniprot.org/uniprotkb/P15056-2.json", { accession: "P15056", isoform: 2 }],
    ["http://purl.uniprot.org/uniprot/P15056", { accession: "P15056" }],
    ["https://identifiers.org/uniprot:P15056", { accession: "P15056" }],
  ])("%s is %j", (input, expected) => {
    expect(normalizeUniprotAccession(input)).toEqual(expected);
  });

  test.each([
    "BRAF_HUMAN",
    "P1505",
    "15056",
    "P15056-0",
    "https://example.org/uniprotkb/P15056/entry",
    "https://www.uniprot.org/uniref/UniRef90_P15056",
  ])("%s is not an accession", (input) => {
    expect(normalizeUniprotAccession(input)).toBeUndefined();
  });
});

describe("UniProt paging headers", () => {
  const link = `<https://rest.uniprot.org/uniprotkb/search?query=braf&cursor=${UNIPROT_NEXT_CURSOR}&size=2>; rel="next"`;

  test("the cursor of the rel=next link is read; other relations and junk are not", () => {
    expect(nextCursorOf(link)).toBe(UNIPROT_NEXT_CURSOR);
    expect(
      nextCursorOf('<https://rest.uniprot.org/uniprotkb/search?cursor=abc>; rel="prev"'),
    ).toBeUndefined();
    expect(nextCursorOf("garbage")).toBeUndefined();
    expect(nextCursorOf(undefined)).toBeUndefined();
  });

  test("with response headers, Link and X-Total-Results decide paging; their absence means the last page", () => {
    const answer = { status: 200, host: "rest.uniprot.org", contentType: "application/json", text: "" };
    const withNext = { ...answer, headers: new Headers({ Link: link, "X-Total-Results": "23" }) };
    expect(uniprotPaging(withNext, 5)).toEqual({
      total: 23,
      isCursorKnown: true,
      nextCursor: UNIPROT_NEXT_CURSOR,
    });
    const lastPage = { ...answer, headers: new Headers({ "x-total-results": "23" }) };
    expect(uniprotPaging(lastPage, undefined)).toEqual({
      total: 23,
      isCursorKnown: true,
      nextCursor: undefined,
    });
    expect(uniprotPaging(answer, 7)).toEqual({ total: 7, isCursorKnown: false, nextCursor: undefined });
  });
});
