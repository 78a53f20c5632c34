/**
 * Literature text as the provider's page reads it, over real answers of the second fidelity review
 * (../shared/fixtures/fidelity3, each file's origin in its SOURCES.md; skipped, visibly, when absent): PubMed
 * MathML (isotopes, V̇O₂max), article languages and original titles, the spaces older PubMed XML lost around
 * inline markup, and bioRxiv's HTML entities. One test runs the PubMed answers through the MCP tool.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { parsePreprintDetails } from "../../../src/servers/sources/biorxiv/preprint-details-parser.js";
import { preprintVersionRecord } from "../../../src/servers/sources/biorxiv/preprint-record.js";
import { BIORXIV } from "../../../src/servers/sources/biorxiv/preprint-server.js";
import { parsePubmedArticles } from "../../../src/servers/sources/pubmed/pubmed-article-parser.js";
import { providerPath } from "../../../src/testing/fake-provider-server.js";
import {
  okResult,
  SHARED_FIDELITY_SAMPLES,
  type SourcesHarness,
  sharedSamples,
  startSourcesHarness,
} from "./sources-harness.js";

const { has, suffix } = sharedSamples(SHARED_FIDELITY_SAMPLES);
const read = (source: string, file: string) =>
  readFileSync(path.join(SHARED_FIDELITY_SAMPLES, source, file), "utf8");

function article(file: string) {
  const [record] = parsePubmedArticles({ text: read("pubmed", file), host: "sample", status: 200 });
  expect(record).toBeDefined();
  return record as NonNullable<typeof record>;
}

describe.skipIf(!has)(`PubMed text over real answers${suffix}`, () => {
  test("PMID 29963580: MathML isotopes read ³He/¹²⁹Xe and ¹H, not 'He 3 / Xe 129'", () => {
    const abstract = article("biopython_pubmed7.xml").abstract ?? "";
    expect(abstract).toContain("(1) inhaled ³He/¹²⁹Xe MRI ventilation and apparent diffusion coefficients");
    expect(abstract).toContain("(3) ultrashort echo-time ¹H MRI proton density measurements");
    expect(abstract).toContain("free-breathing ¹H MRI specific ventilation");
    expect(abstract).not.toMatch(/He 3|Xe 129|H 1 MRI/);
  });

  test("PMID 30108519: MathML V̇O₂max keeps its dot and subscript, beside the <sub>/<sup> markup", () => {
    const abstract = article("biopython_pubmed6.xml").abstract ?? "";
    expect(abstract).toContain("maximal oxygen uptake ( V̇O₂max ) 67.6 ± 4.1 ml·kg⁻¹·min⁻¹]");
    expect(abstract).toContain("maximal ramp incremental running test for V̇O₂max determination");
    expect(abstract).not.toMatch(/V \. O 2|m a x/);
    expect(article("biopython_pubmed6.xml").title).toBe(
      'A "Blood Relationship" Between the Overlooked Minimum Lactate Equivalent and Maximal Lactate Steady State in Trained Runners. Back to the Old Days?',
    );
  });

  test("PMID 38048813 (German only): the language, NLM's translated title and the original title", () => {
    const record = article("metapub_38048813.xml");
    expect(record.title).toBe("[A Broader Scope - Bio-Psycho-Social Medicine In Global Focus].");
    expect(record.structuredData).toMatchObject({
      languages: ["ger"],
      languageNames: ["German"],
      originalTitle: "A Broader Scope – Bio-psycho-soziale Medizin im globalen Fokus.",
    });
    expect(record.warnings).toEqual([
      "PMID:38048813 is written in German, not English: its title here is NLM's English translation and its " +
        'text is in German. Its original title is "A Broader Scope – Bio-psycho-soziale Medizin im globalen Fokus."',
    ]);
  });

  test("PMID 36987902 (Norwegian and English): both languages and the Norwegian title", () => {
    const record = article("metapub_36987902.xml");
    expect(record.structuredData).toMatchObject({
      languages: ["eng", "nor"],
      languageNames: ["English", "Norwegian"],
      originalTitle:
        "Pasienter over 75 år innlagt ved Brannskadeavdelinga, Haukeland universitetssjukehus 2000–19.",
    });
    expect(record.warnings).toContainEqual(
      expect.stringMatching(/^PMID:36987902 is published in English and Norwegian\./),
    );
  });

  test("an English-only article carries its language and no language warning", () => {
    const record = article("biopython_pubmed7.xml");
    expect(record.structuredData).toMatchObject({ languages: ["eng"], languageNames: ["English"] });
    expect(record.warnings).toEqual([]);
  });

  test("PMID 27797938 as served in 2018: the words glued to inline markup are apart again", () => {
    const record = article("biopython_title_with_html_tags.xml");
    expect(record.title).toBe(
      "Leucocyte telomere length, genetic variants at the TERT gene region and risk of pancreatic cancer.",
    );
    const abstract = record.abstract ?? "";
    expect(abstract).toContain("single-nucleotide polymorphisms (SNPs) at the TERT region in relation to");
    expect(abstract).toContain("Three SNPs at TERT (linkage disequilibrium");
    expect(abstract).toContain("(TERT) gene region");
    expect(abstract).not.toMatch(/theTERT|TERTgene|atTERT/);
  });
});

describe.skipIf(!has)(`PubMed corrections over real answers${suffix}`, () => {
  test.each([
    ["metapub_38147649.xml", "corrected", "39705317"],
    ["metapub_35649368.xml", "corrected", "35767954"],
    ["metapub_38833988.xml", "erratum-notice", "33279609"],
    ["metapub_38962805.xml", "erratum-notice", "38446048"],
  ])("%s: %s, linking PMID %s, with a warning in words", (file, status, linked) => {
    const record = article(file);
    expect(record.structuredData?.integrity).toMatchObject({ status, notices: [{ pmid: linked }] });
    expect(record.warnings).toContainEqual(expect.stringContaining(`PMID:${linked}`));
  });

  test("metapub_36156117.xml: the journal version of a preprint keeps its UpdateOf link, without a warning", () => {
    const record = article("metapub_36156117.xml");
    expect(record.structuredData?.commentsCorrections).toContainEqual(
      expect.objectContaining({ type: "UpdateOf" }),
    );
    expect(record.structuredData?.integrity).toBeUndefined();
    expect(record.warnings).toEqual([]);
  });
});

describe.skipIf(!has)(`bioRxiv text over real records${suffix}`, () => {
  test('10.1101/000109: HTML entities of the API\'s abstract are decoded ("budded")', () => {
    // The R client stored the API's collection without its envelope; the envelope is the only edit.
    const collection = JSON.parse(read("biorxiv", "esjournals_biorxiv_2013-01-01_2013-11-07.json"));
    const details = parsePreprintDetails({
      text: JSON.stringify({ messages: [{ status: "ok" }], collection }),
      host: "sample",
      status: 200,
    });
    const version = details.versions.find((v) => v.doi === "10.1101/000109");
    expect(version?.abstract).toContain(
      'M. nasutus "budded" off of a central Californian M. guttatus population',
    );
    expect(version?.abstract).not.toMatch(/&quot;|&amp;|&lt;|&gt;/);
    for (const v of details.versions)
      expect(`${v.title} ${v.abstract}`).not.toMatch(/&(?:#\d+|#x[0-9a-f]+|[a-z]+);/i);
    const record = preprintVersionRecord(BIORXIV, version as NonNullable<typeof version>, [1]);
    expect(record.abstract).toContain('"budded"');
  });
});

let h: SourcesHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe.skipIf(!has)(`pubmed_fetch_abstracts over real answers${suffix}`, () => {
  test("the MCP tool returns the rendered MathML and the language warning a model reads", async () => {
    const efetch = providerPath("pubmed", "eutils", "/efetch.fcgi");
    h = await startSourcesHarness(
      [
        { path: efetch, query: { id: "29963580" }, body: read("pubmed", "biopython_pubmed7.xml") },
        { path: efetch, query: { id: "38048813" }, body: read("pubmed", "metapub_38048813.xml") },
      ],
      { only: ["pubmed"] },
    );
    const isotopes = okResult(await h.call("pubmed_fetch_abstracts", { pmids: ["29963580"] }));
    expect(isotopes.records[0]?.abstract).toContain("inhaled ³He/¹²⁹Xe MRI ventilation");
    const german = okResult(await h.call("pubmed_fetch_abstracts", { pmids: ["38048813"] }));
    expect(german.records[0]?.warnings).toContainEqual(
      expect.stringContaining("is written in German, not English"),
    );
    expect(german.records[0]?.structuredData?.originalTitle).toBe(
      "A Broader Scope – Bio-psycho-soziale Medizin im globalen Fokus.",
    );
  });
});
