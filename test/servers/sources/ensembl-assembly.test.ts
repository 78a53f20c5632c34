/**
 * An Ensembl answer cites the site of the assembly it was computed on: the real GRCh37 VEP answer of
 * test/fixtures/providers/ensembl/real (origin in its SOURCES.md) links to grch37.ensembl.org, whose pages show
 * GRCh37 coordinates, never to www.ensembl.org (GRCh38); `assembly: "GRCh37"` asks Ensembl's GRCh37 service.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { parseEnsemblLookup } from "../../../src/servers/sources/ensembl/ensembl-json.js";
import { ensemblGeneRecord } from "../../../src/servers/sources/ensembl/ensembl-records.js";
import { parseVepAnswer } from "../../../src/servers/sources/ensembl/ensembl-vep-parser.js";
import { providerPath } from "../../../src/testing/fake-provider-server.js";
import {
  errorOf,
  expectUrlsOnManifestHosts,
  okResult,
  readManifest,
  resultUrls,
  SHARED_PROVIDER_SAMPLES,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const REAL = path.resolve(import.meta.dirname, "../../fixtures/providers/ensembl/real");
const VEP_GRCH37 = path.join(REAL, "vep_grch37_hgvs_AGT_c803TC_and_9_g22125503GC.json");
const BRAF_LOOKUP = path.join(SHARED_PROVIDER_SAMPLES, "ensembl", "lookup_id_ENSG00000157764_expand1.json");

describe("GRCh37 answers cite the GRCh37 site", () => {
  test("the real GRCh37 VEP answer: label, page, cross-references and assembly all say GRCh37", () => {
    const text = readFileSync(VEP_GRCH37, "utf8");
    const [agt, chr9] = parseVepAnswer({ text, host: "sample", status: 200 }, { species: "homo_sapiens" });
    expect(agt?.primaryCitation.label).toBe(
      "[Ensembl VEP (GRCh37):AGT:c.803T>C](https://grch37.ensembl.org/Homo_sapiens/Variation/Explore?v=rs699)",
    );
    expect(agt?.structuredData).toMatchObject({
      assembly: "GRCh37",
      location: { seqRegion: "1", start: 230845794, end: 230845794, assembly: "GRCh37" },
    });
    expect(chr9?.url).toBe("https://grch37.ensembl.org/Homo_sapiens/Variation/Explore?v=rs1333049");
    const linked = [agt, chr9].flatMap((r) => r?.crossReferences.flatMap((x) => x.url ?? []) ?? []);
    const ensemblLinks = linked.filter((url) => url.includes("ensembl.org"));
    expect(ensemblLinks.length).toBeGreaterThan(0);
    for (const url of ensemblLinks) expect(new URL(url).hostname).toBe("grch37.ensembl.org");
    const hosts = readManifest("ensembl").governance.networkHosts;
    for (const url of resultUrls({ records: [agt, chr9].flatMap((r) => (r ? [r] : [])) })) {
      expect(hosts).toContain(new URL(url).hostname);
    }
  });

  test.skipIf(!existsSync(BRAF_LOOKUP))("a GRCh37 gene lookup links to grch37.ensembl.org", () => {
    // Edited: the real GRCh38 BRAF lookup with its assembly_name set to GRCh37, as grch37.rest.ensembl.org answers.
    const real = readFileSync(BRAF_LOOKUP, "utf8");
    expect(real).toContain('"assembly_name": "GRCh38"');
    const text = real.replaceAll('"assembly_name": "GRCh38"', '"assembly_name": "GRCh37"');
    const record = ensemblGeneRecord(parseEnsemblLookup({ text, host: "sample", status: 200 }));
    expect(record.primaryCitation.url).toBe(
      "https://grch37.ensembl.org/Homo_sapiens/Gene/Summary?g=ENSG00000157764",
    );
    expect(record.primaryCitation.label).toMatch(/^\[Ensembl \(GRCh37\):ENSG00000157764\]/);
    const grch38 = ensemblGeneRecord(parseEnsemblLookup({ text: real, host: "sample", status: 200 }));
    expect(grch38.primaryCitation.url).toBe(
      "https://www.ensembl.org/Homo_sapiens/Gene/Summary?g=ENSG00000157764",
    );
  });
});

let h: SourcesHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("ensembl_variant_consequence with assembly GRCh37", () => {
  test("asks Ensembl's GRCh37 service and cites the GRCh37 site", async () => {
    // The real answer is to a two-variant POST; it is served as is to the one-variant GET.
    h = await startSourcesHarness(
      [{ path: /^\/ensembl\/rest-grch37\/vep\/homo_sapiens\/hgvs\//, file: VEP_GRCH37 }],
      { only: ["ensembl"] },
    );
    const result = okResult(
      await h.call("ensembl_variant_consequence", { variant: "AGT:c.803T>C", assembly: "GRCh37" }),
    );
    expect(h.provider.requests.map((r) => r.path)).toEqual([
      providerPath("ensembl", "rest-grch37", "/vep/homo_sapiens/hgvs/AGT:c.803T%3EC"),
    ]);
    expect(result.data).toMatchObject({ assembly: "GRCh37" });
    expect(result.records[0]?.url).toBe("https://grch37.ensembl.org/Homo_sapiens/Variation/Explore?v=rs699");
    expectUrlsOnManifestHosts(result, "ensembl");
  });

  test("GRCh37 for another species is invalid_input, without a request", async () => {
    h = await startSourcesHarness([], { only: ["ensembl"] });
    const error = errorOf(
      await h.call("ensembl_variant_consequence", { variant: "rs1", species: "mouse", assembly: "GRCh37" }),
    );
    expect(error.code).toBe("invalid_input");
    expect(h.provider.requests).toHaveLength(0);
  });
});
