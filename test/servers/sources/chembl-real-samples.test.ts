/**
 * The ChEMBL parsers over real ChEMBL answers captured in ../shared/fixtures/providers/chembl (see README.txt
 * there for their origin). Skipped, visibly, when that folder is not next to the repository.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import type { McpRecord } from "../../../src/contract/result-types.js";
import { chemblActivityRecord } from "../../../src/servers/sources/chembl/chembl-activity-parser.js";
import { chemblMechanismRecord } from "../../../src/servers/sources/chembl/chembl-mechanism-parser.js";
import { chemblMoleculeRecord } from "../../../src/servers/sources/chembl/chembl-molecule-parser.js";
import { type ChemblItem, parseChemblPage } from "../../../src/servers/sources/chembl/chembl-page.js";
import { chemblTargetRecord } from "../../../src/servers/sources/chembl/chembl-target-parser.js";
import { isProviderError } from "../../../src/servers/sources/provider-error.js";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { readManifest, resultUrls, SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const SAMPLES = path.join(SHARED_PROVIDER_SAMPLES, "chembl");
const hasSamples = existsSync(SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SAMPLES} not found)`;
const jsonFiles = hasSamples ? readdirSync(SAMPLES).filter((f) => f.endsWith(".json")) : [];

const PARSERS: Readonly<Record<string, (item: ChemblItem) => McpRecord | undefined>> = {
  molecules: chemblMoleculeRecord,
  targets: chemblTargetRecord,
  activities: chemblActivityRecord,
  mechanisms: chemblMechanismRecord,
};

function sample(file: string): ProviderAnswer {
  return { text: readFileSync(path.join(SAMPLES, file), "utf8"), host: "sample", status: 200 };
}

function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isProviderError(error) ? error.code : "not a ProviderError";
  }
  return undefined;
}

describe.skipIf(!hasSamples)(`real ChEMBL samples${suffix}`, () => {
  test("mechanism of pembrolizumab: the list envelope with page_meta", () => {
    const page = parseChemblPage(sample("mechanism_json.json"), "mechanisms");
    expect(page).toMatchObject({ total: 1, offset: 0 });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({
      molecule_chembl_id: "CHEMBL3137343",
      target_chembl_id: "CHEMBL3307223",
      max_phase: 4,
    });
  });

  test("mechanism of pembrolizumab: a record citing the compound page, with its FDA label as an HTTPS link", () => {
    const [item] = parseChemblPage(sample("mechanism_json.json"), "mechanisms").items;
    const record = chemblMechanismRecord(item ?? {});
    expect(record).toMatchObject({
      identifier: "2300",
      identifierType: "chembl.mechanism",
      title: "Programmed cell death protein 1 inhibitor",
      url: "https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL3137343",
      primaryCitation: { url: "https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL3137343" },
      crossReferences: [
        {
          identifier: "CHEMBL3137343",
          identifierType: "chembl.compound",
          url: "https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL3137343",
        },
        {
          identifier: "CHEMBL3307223",
          identifierType: "chembl.target",
          url: "https://www.ebi.ac.uk/chembl/explore/target/CHEMBL3307223",
        },
        {
          identifier: "label/2014/125514lbl.pdf",
          identifierType: "fda_label",
          url: "https://www.accessdata.fda.gov/drugsatfda_docs/label/2014/125514lbl.pdf",
        },
        {
          identifier: "2300",
          identifierType: "chembl.mechanism",
          url: "https://www.ebi.ac.uk/chembl/api/data/mechanism/2300",
        },
      ],
      structuredData: {
        mechanismOfAction: "Programmed cell death protein 1 inhibitor",
        actionType: "INHIBITOR",
        moleculeChemblId: "CHEMBL3137343",
        parentMoleculeChemblId: "CHEMBL3137343",
        targetChemblId: "CHEMBL3307223",
        directInteraction: true,
        diseaseEfficacy: true,
        molecularMechanism: true,
        maxPhase: 4,
        mechanismRefs: [
          {
            refType: "FDA",
            refId: "label/2014/125514lbl.pdf",
            refUrl: "http://www.accessdata.fda.gov/drugsatfda_docs/label/2014/125514lbl.pdf",
          },
        ],
      },
      warnings: [],
    });
    // The sample's null comments, site and variant are left out, not shown as empty values.
    for (const key of [
      "mechanismComment",
      "selectivityComment",
      "bindingSiteComment",
      "bindingSiteId",
      "variant",
    ]) {
      expect(record?.structuredData).not.toHaveProperty(key);
    }
  });

  test("an answer without the expected list is malformed, not an empty success", () => {
    expect(errorCode(() => parseChemblPage(sample("mechanism_json.json"), "molecules"))).toBe(
      "upstream_unavailable",
    );
  });

  test.each(jsonFiles)(
    "%s: every list item of a parsed resource becomes a record on the manifest's hosts",
    (file) => {
      const body = JSON.parse(sample(file).text) as Record<string, unknown>;
      const listKey = Object.keys(body).find((key) => key !== "page_meta") ?? "";
      const page = parseChemblPage(sample(file), listKey);
      expect(page.total).toBeGreaterThanOrEqual(page.items.length);
      const parse = PARSERS[listKey];
      if (!parse) return; // A resource the chembl tools do not return: the envelope is what matters.
      const records = page.items.map((item) => parse(item));
      expect(records.every((r) => r !== undefined)).toBe(true);
      const hosts = readManifest("chembl").governance.networkHosts;
      for (const url of resultUrls({ records: records as McpRecord[] })) {
        expect(hosts).toContain(new URL(url).hostname);
      }
    },
  );
});
