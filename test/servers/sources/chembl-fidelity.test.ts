/**
 * What a scientist opens from a ChEMBL record: every record type (molecule, target, activity, mechanism) cites
 * a ChEMBL page a person can read, never the web-service JSON, and drug mechanisms (mechanism of action, FDA
 * label and literature references) have a tool. Runs the real sources server against the fake provider, which
 * serves the hand-made fixtures of test/fixtures/providers/chembl in ChEMBL's answer format.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import type { McpRecord } from "../../../src/contract/result-types.js";
import { chemblActivityRecord } from "../../../src/servers/sources/chembl/chembl-activity-parser.js";
import { ASPIRIN_SMILES, CHEMBL_FIXTURES, chemblFakeRoutes } from "../../fixtures/providers/chembl/routes.js";
import {
  errorOf,
  expectUrlsOnManifestHosts,
  okResult,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const MECHANISM = "/chembl/api/mechanism.json";
const HUMAN_PAGE =
  /^https:\/\/www\.ebi\.ac\.uk\/chembl\/explore\/(?:compound|target|assay|document)\/CHEMBL\d+$/;

let h: SourcesHarness;
beforeEach(async () => {
  h = await startSourcesHarness(chemblFakeRoutes(), { only: ["chembl"] });
});
afterEach(() => h.close());

describe("ChEMBL citations point at ChEMBL pages, not at the web-service JSON", () => {
  test.each([
    ["chembl_search_molecules", { query: "imatinib" }],
    ["chembl_search_targets", { query: "EGFR" }],
    ["chembl_search_activities", { molecule: "CHEMBL941" }],
    ["chembl_similarity_search", { structure: ASPIRIN_SMILES }],
    ["chembl_get_mechanisms", { molecule: "CHEMBL941" }],
  ])("%s: every record's url and citation is an explore page", async (tool, args) => {
    const result = okResult(await h.call(tool, args));
    expect(result.records.length).toBeGreaterThan(0);
    for (const record of result.records) {
      expect(record.url, record.identifier).toMatch(HUMAN_PAGE);
      expect(record.primaryCitation.url, record.identifier).toBe(record.url);
      expect(record.primaryCitation.label).not.toContain("/api/");
    }
    expectUrlsOnManifestHosts(result, "chembl");
  });

  test("an activity cites its assay's page and keeps the web-service resource as a machine cross-reference", async () => {
    const result = okResult(
      await h.call("chembl_search_activities", { molecule: "CHEMBL941", max_results: 1 }),
    );
    expect(result.records[0]).toMatchObject({
      identifier: "9100001",
      identifierType: "chembl.activity",
      url: "https://www.ebi.ac.uk/chembl/explore/assay/CHEMBL8800001",
      primaryCitation: {
        label:
          "[ChEMBL activity 9100001 (assay CHEMBL8800001)](https://www.ebi.ac.uk/chembl/explore/assay/CHEMBL8800001)",
        identifier: "9100001",
        identifierType: "chembl.activity",
      },
    });
    expect(result.records[0]?.crossReferences).toContainEqual({
      identifier: "9100001",
      identifierType: "chembl.activity",
      url: "https://www.ebi.ac.uk/chembl/api/data/activity/9100001",
    });
  });

  // Edited sample: the first activity of activities.json with assay_chembl_id (then also document_chembl_id) set
  // to null, as ChEMBL sends a value whose assay or document it does not name.
  test("an activity without an assay cites its document; without either, the resource with a warning", () => {
    const [first] = JSON.parse(
      readFileSync(path.join(CHEMBL_FIXTURES, "activities.json"), "utf8"),
    ).activities;
    const noAssay = chemblActivityRecord({ ...first, assay_chembl_id: null }) as McpRecord;
    expect(noAssay.url).toBe("https://www.ebi.ac.uk/chembl/explore/document/CHEMBL7700001");
    expect(noAssay.primaryCitation.label).toContain("ChEMBL activity 9100001 (document CHEMBL7700001)");
    expect(noAssay.warnings).toEqual([]);
    const bare = chemblActivityRecord({
      ...first,
      assay_chembl_id: null,
      document_chembl_id: null,
    }) as McpRecord;
    expect(bare.url).toBe("https://www.ebi.ac.uk/chembl/api/data/activity/9100001");
    expect(bare.warnings).toEqual([
      "ChEMBL names no assay or document for this value; the citation is its web-service resource.",
    ]);
  });
});

describe("chembl_get_mechanisms", () => {
  test("a drug's mechanisms: action, target, flags, phase and FDA/PubMed/DailyMed references as links", async () => {
    const result = okResult(
      await h.call("chembl_get_mechanisms", {
        molecule: "https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL941",
      }),
    );
    expect(h.provider.requests.map((r) => [r.path, r.query])).toEqual([
      [MECHANISM, { molecule_chembl_id: "CHEMBL941", order_by: "mec_id", limit: "20", offset: "0" }],
    ]);
    expect(result).toMatchObject({
      toolId: "get_mechanisms",
      warnings: [],
      data: { total: 2, start: 0, returned: 2, hasMore: false },
    });
    const [abl, kit] = result.records;
    expect(abl).toMatchObject({
      identifier: "9500001",
      identifierType: "chembl.mechanism",
      title: "Bcr/Abl fusion protein inhibitor",
      url: "https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL941",
      contentScope: "structured-record",
      primaryCitation: {
        label:
          "[ChEMBL mechanism 9500001 (compound CHEMBL941)](https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL941)",
      },
      crossReferences: [
        {
          identifier: "CHEMBL941",
          identifierType: "chembl.compound",
          url: "https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL941",
        },
        {
          identifier: "CHEMBL1862",
          identifierType: "chembl.target",
          url: "https://www.ebi.ac.uk/chembl/explore/target/CHEMBL1862",
        },
        {
          identifier: "label/2008/021588s024lbl.pdf",
          identifierType: "fda_label",
          url: "https://www.accessdata.fda.gov/drugsatfda_docs/label/2008/021588s024lbl.pdf",
        },
        { identifier: "11287972", identifierType: "pmid", url: "https://pubmed.ncbi.nlm.nih.gov/11287972/" },
        {
          identifier: "9500001",
          identifierType: "chembl.mechanism",
          url: "https://www.ebi.ac.uk/chembl/api/data/mechanism/9500001",
        },
      ],
      structuredData: {
        mechanismOfAction: "Bcr/Abl fusion protein inhibitor",
        actionType: "INHIBITOR",
        moleculeChemblId: "CHEMBL941",
        parentMoleculeChemblId: "CHEMBL941",
        targetChemblId: "CHEMBL1862",
        directInteraction: true,
        diseaseEfficacy: true,
        molecularMechanism: true,
        maxPhase: 4,
        mechanismRefs: [
          {
            refType: "FDA",
            refId: "label/2008/021588s024lbl.pdf",
            refUrl: "http://www.accessdata.fda.gov/drugsatfda_docs/label/2008/021588s024lbl.pdf",
          },
          { refType: "PubMed", refId: "11287972", refUrl: "http://europepmc.org/abstract/MED/11287972" },
        ],
      },
      warnings: [],
    });
    expect(kit?.crossReferences).toContainEqual({
      identifier: "211ef2da-2868-4a77-8bde-45c8d9cb0f4e",
      identifierType: "dailymed",
      url: "https://dailymed.nlm.nih.gov/dailymed/lookup.cfm?setid=211ef2da-2868-4a77-8bde-45c8d9cb0f4e",
    });
    expectUrlsOnManifestHosts(result, "chembl");
  });

  test("by target: an indirect, non-efficacy mechanism says so; links off the manifest's hosts stay identifiers", async () => {
    const result = okResult(await h.call("chembl_get_mechanisms", { target: "CHEMBL1862", start: 1 }));
    expect(result.data).toEqual({ total: 2, start: 1, returned: 1, hasMore: false });
    const [indirect] = result.records;
    expect(indirect).toMatchObject({
      identifier: "9500003",
      structuredData: {
        directInteraction: false,
        diseaseEfficacy: false,
        maxPhase: 1,
        variant: { accession: "P00519", mutation: "T315I" },
        mechanismComment: "Hand-made fixture: acts through an active metabolite.",
      },
      warnings: [
        "ChEMBL records this mechanism as indirect: the drug is not known to bind this target itself.",
        "ChEMBL records that this target is not thought to carry the drug's clinical efficacy.",
      ],
    });
    expect(indirect?.crossReferences).toContainEqual({
      identifier: "Imatinib",
      identifierType: "reference.wikipedia",
    });
    expect(indirect?.crossReferences).toContainEqual({
      identifier: "Expert",
      identifierType: "reference.expert",
    });
    expectUrlsOnManifestHosts(result, "chembl");
  });

  test("a known compound without mechanisms is an empty success with a warning; an unknown id is not_found", async () => {
    const empty = okResult(await h.call("chembl_get_mechanisms", { molecule: "CHEMBL1642" }));
    expect(empty.records).toEqual([]);
    expect(empty.warnings[0]).toMatch(/no mechanism of action matching these filters/);
    expect(errorOf(await h.call("chembl_get_mechanisms", { molecule: "CHEMBL999999" }))).toMatchObject({
      code: "not_found",
      message: "ChEMBL has no molecule CHEMBL999999.",
    });
  });

  test.each([
    ["a name instead of an id", { molecule: "imatinib" }, "invalid_id"],
    ["neither molecule nor target", {}, "invalid_input"],
  ])("%s is %s, without any provider request", async (_name, args, code) => {
    expect(errorOf(await h.call("chembl_get_mechanisms", args)).code).toBe(code);
    expect(h.provider.requests).toHaveLength(0);
  });
});
