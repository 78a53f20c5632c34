/**
 * Scientific fidelity of the literature sources over real provider answers (../shared/fixtures/providers),
 * some realistically edited in place here (each edit is named where it is made; see also
 * test/fixtures/providers/{pubmed,europe-pmc,arxiv}/README.txt): retraction and other integrity flags,
 * super/subscripts, structured abstracts, and searches NCBI widened. Skipped, visibly, without the samples.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { parseArxivFeed } from "../../../src/servers/sources/arxiv/arxiv-feed-parser.js";
import { europePmcRecord } from "../../../src/servers/sources/europe-pmc/europe-pmc-record.js";
import { parseEuropePmcSearch } from "../../../src/servers/sources/europe-pmc/europe-pmc-search-parser.js";
import { parseEsearchJson, widenedSearchWarnings } from "../../../src/servers/sources/ncbi/eutils.js";
import { parsePubmedArticles } from "../../../src/servers/sources/pubmed/pubmed-article-parser.js";
import { pubmedSearchTool } from "../../../src/servers/sources/pubmed/pubmed-search-tools.js";
import type {
  ProviderAnswer,
  SourceHttp,
  SourceTool,
  SourceToolContext,
} from "../../../src/servers/sources/source-module.js";
import { SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const hasSamples = existsSync(SHARED_PROVIDER_SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SHARED_PROVIDER_SAMPLES} not found)`;

function sampleText(source: string, file: string): string {
  return readFileSync(path.join(SHARED_PROVIDER_SAMPLES, source, file), "utf8");
}

function answer(text: string): ProviderAnswer {
  return { text, host: "sample", status: 200 };
}

/** Replaces `from` (which must occur in the sample) so an edit that stops matching fails loudly. */
function edit(text: string, from: string, to: string): string {
  expect(text).toContain(from);
  return text.replace(from, to);
}

// Edit of the real EFetch of PMID 22663011 into a retracted article, as PubMed marks one: a "Retracted
// Publication" type and, first in its real CommentsCorrectionsList, RetractionIn (with the notice's citation
// and a made-up PMID 99999999) and ErratumIn entries, plus <sup> markup of the kind PubMed titles and abstracts carry.
function retractedEfetch(): string {
  let xml = sampleText("pubmed", "efetch_pubmed_xml_22663011.xml");
  xml = edit(
    xml,
    "<ArticleTitle>Improved survival with MEK inhibition in BRAF-mutated melanoma.</ArticleTitle>",
    "<ArticleTitle>Improved survival with MEK inhibition in BRAF<sup>V600E</sup>-mutated melanoma.</ArticleTitle>",
  );
  xml = edit(xml, "P&lt;0.001). At 6 months", "P=1.2×10<sup>-8</sup>; CD8<sup>+</sup>). At 6 months");
  xml = edit(
    xml,
    '<PublicationType UI="D016428">Journal Article</PublicationType>',
    '<PublicationType UI="D016428">Journal Article</PublicationType><PublicationType UI="D016441">Retracted Publication</PublicationType>',
  );
  xml = edit(
    xml,
    "<CommentsCorrectionsList>",
    '<CommentsCorrectionsList><CommentsCorrections RefType="RetractionIn"><RefSource>N Engl J Med. 2013 Jan 3;368(1):99</RefSource><PMID Version="1">99999999</PMID></CommentsCorrections><CommentsCorrections RefType="ErratumIn"><RefSource>N Engl J Med. 2012 Jul 26;367(4):389</RefSource></CommentsCorrections>',
  );
  return xml;
}

describe.skipIf(!hasSamples)(`literature integrity flags${suffix}`, () => {
  test("PubMed: a Retracted Publication with RetractionIn is flagged, warned and linked, not peer-reviewed", () => {
    const [record] = parsePubmedArticles(answer(retractedEfetch()));
    expect(record?.peerReviewStatus).toBe("unknown");
    expect(record?.structuredData?.integrity).toEqual({
      status: "retracted",
      notices: [
        {
          type: "retraction",
          pmid: "99999999",
          citation: "N Engl J Med. 2013 Jan 3;368(1):99",
          url: "https://pubmed.ncbi.nlm.nih.gov/99999999/",
        },
        { type: "erratum", citation: "N Engl J Med. 2012 Jul 26;367(4):389" },
      ],
    });
    expect(record?.warnings.join(" ")).toMatch(/^RETRACTED: PMID:22663011 has been retracted/);
    expect(record?.warnings.join(" ")).toContain("https://pubmed.ncbi.nlm.nih.gov/99999999/");
  });

  test("PubMed: the unedited real record carries no flag and stays peer-reviewed", () => {
    const [record] = parsePubmedArticles(answer(sampleText("pubmed", "efetch_pubmed_xml_22663011.xml")));
    expect(record?.peerReviewStatus).toBe("peer-reviewed");
    expect(record?.structuredData?.integrity).toBeUndefined();
    expect(record?.warnings).toEqual([]);
  });

  test("PubMed: a Retraction of Publication notice says it is a notice and links the retracted article", () => {
    let xml = sampleText("pubmed", "efetch_pubmed_xml_22663011.xml");
    xml = edit(
      xml,
      '<PublicationType UI="D016428">Journal Article</PublicationType>',
      '<PublicationType UI="D016440">Retraction of Publication</PublicationType>',
    );
    xml = edit(
      xml,
      "<CommentsCorrectionsList>",
      '<CommentsCorrectionsList><CommentsCorrections RefType="RetractionOf"><RefSource>N Engl J Med. 2012 Jul 12;367(2):107-14</RefSource><PMID Version="1">22663011</PMID></CommentsCorrections>',
    );
    const [record] = parsePubmedArticles(answer(xml));
    expect(record?.structuredData?.integrity).toMatchObject({
      status: "retraction-notice",
      notices: [{ type: "retracted-article", pmid: "22663011" }],
    });
    expect(record?.warnings[0]).toContain("is a retraction notice");
  });

  test("PubMed: an expression of concern is flagged; an erratum alone keeps peer-reviewed but warns", () => {
    const real = sampleText("pubmed", "efetch_pubmed_xml_22663011.xml");
    const concern = edit(
      real,
      "<CommentsCorrectionsList>",
      '<CommentsCorrectionsList><CommentsCorrections RefType="ExpressionOfConcernIn"><RefSource>N Engl J Med. 2013;368:1</RefSource><PMID Version="1">99999997</PMID></CommentsCorrections>',
    );
    const [flagged] = parsePubmedArticles(answer(concern));
    expect(flagged?.structuredData?.integrity).toMatchObject({ status: "expression-of-concern" });
    expect(flagged?.peerReviewStatus).toBe("unknown");
    expect(flagged?.warnings[0]).toMatch(/^EXPRESSION OF CONCERN: .*PMID:99999997/);
    const erratum = edit(
      real,
      "<CommentsCorrectionsList>",
      '<CommentsCorrectionsList><CommentsCorrections RefType="ErratumIn"><RefSource>N Engl J Med. 2012 Jul 26;367(4):389</RefSource></CommentsCorrections>',
    );
    const [corrected] = parsePubmedArticles(answer(erratum));
    expect(corrected?.structuredData?.integrity).toMatchObject({ status: "corrected" });
    expect(corrected?.peerReviewStatus).toBe("peer-reviewed");
    expect(corrected?.warnings[0]).toMatch(/^CORRECTED: an erratum to PMID:22663011/);
  });

  test("Europe PMC: retracted pubType and a 'Retraction in' commentCorrection are flagged with the notice link", () => {
    const json = edit(
      sampleText("europepmc", "search_lite_pmid_20516115.json"),
      '"pubType":"research support, non-u.s. gov\'t; research-article; journal article; research support, n.i.h., extramural"',
      '"pubTypeList":{"pubType":["Research Support, Non-U.S. Gov\'t","research-article","Journal Article","Retracted Publication"]},' +
        '"commentCorrectionList":{"commentCorrection":[{"id":"99999998","source":"MED","reference":"Cancer Res. 2011;71(3):1234","type":"Retraction in","orgIdSource":"NLM"}]}',
    );
    const [hit] = parseEuropePmcSearch(answer(json)).hits;
    const record = europePmcRecord(hit as NonNullable<typeof hit>);
    expect(record.peerReviewStatus).toBe("unknown");
    expect(record.structuredData?.integrity).toEqual({
      status: "retracted",
      notices: [
        {
          type: "retraction",
          pmid: "99999998",
          citation: "Cancer Res. 2011;71(3):1234",
          url: "https://europepmc.org/article/MED/99999998",
        },
      ],
    });
    expect(record.warnings[0]).toMatch(/^RETRACTED: PMID:20516115 has been retracted/);
  });

  test("arXiv: a paper whose comment says it was withdrawn is flagged and warned", () => {
    const xml = edit(
      sampleText("arxiv", "query_id_list_1605.08386.atom"),
      "<arxiv:comment>20 pages, 3 figures</arxiv:comment>",
      "<arxiv:comment>This paper has been withdrawn by the author due to an error in the proof of Theorem 3</arxiv:comment>",
    );
    const [entry] = parseArxivFeed(answer(xml)).entries;
    expect(entry?.record.structuredData?.integrity).toEqual({
      status: "withdrawn",
      notices: [{ type: "withdrawal", url: "https://arxiv.org/abs/1605.08386v1" }],
    });
    expect(entry?.record.warnings[0]).toMatch(/^WITHDRAWN: arXiv:1605\.08386v1/);
    const [plain] = parseArxivFeed(answer(sampleText("arxiv", "query_id_list_1605.08386.atom"))).entries;
    expect(plain?.record.warnings).toEqual([]);
  });
});

describe.skipIf(!hasSamples)(`literature super/subscripts and abstract sections${suffix}`, () => {
  test("PubMed: <sup> in title and abstract is rendered, not flattened", () => {
    const [record] = parsePubmedArticles(answer(retractedEfetch()));
    expect(record?.title).toBe("Improved survival with MEK inhibition in BRAF^(V600E)-mutated melanoma.");
    expect(record?.abstract).toContain("P=1.2×10⁻⁸; CD8⁺)");
    expect(record?.abstract?.split("\n\n").map((part) => part.split(":")[0])).toEqual([
      "BACKGROUND",
      "METHODS",
      "RESULTS",
      "CONCLUSIONS",
    ]);
  });

  test("Europe PMC: <h4> sections of a core abstract stay on their own lines; <sup>/<sub> are rendered", () => {
    // Edit: the real lite hit given the core fields a MEDLINE record has (abstractText with <h4> headings).
    const json = edit(
      sampleText("europepmc", "search_lite_pmid_20516115.json"),
      '"title":"Comprehensive analysis',
      '"abstractText":"<h4>Background</h4>Variants of uncertain significance in <i>BRCA1</i> (P = 3 × 10<sup>-5</sup>).' +
        '<h4>Results</h4>Of 117 variants, 49 disrupted folding; H<sub>2</sub>O<sub>2</sub> and CD8<sup>+</sup> cells were used.",' +
        '"title":"Comprehensive analysis',
    );
    const [hit] = parseEuropePmcSearch(answer(json)).hits;
    expect(hit?.abstract).toBe(
      "Background: Variants of uncertain significance in BRCA1 (P = 3 × 10⁻⁵).\n\n" +
        "Results: Of 117 variants, 49 disrupted folding; H₂O₂ and CD8⁺ cells were used.",
    );
  });
});

describe.skipIf(!hasSamples)(`widened NCBI searches${suffix}`, () => {
  test("PubMed search names the dropped phrase and shows NCBI's QueryTranslation (real esearch, 40,362 hits)", async () => {
    const esearch = sampleText("pubmed", "esearch_json_count40362_retmax100.json");
    const efetch = sampleText("pubmed", "efetch_pubmed_xml_22663011.xml");
    // The SourceHttp seam: the real esearch answer, and the real EFetch sample for any id list.
    const http: SourceHttp = {
      request: async (_endpoint, requestPath) => ({
        status: 200,
        host: "eutils.ncbi.nlm.nih.gov",
        contentType: requestPath.startsWith("/esearch") ? "application/json" : "text/xml",
        text: requestPath.startsWith("/esearch") ? esearch : efetch,
      }),
    };
    const context: SourceToolContext = { http, now: () => 0 };
    const tool = pubmedSearchTool as unknown as SourceTool;
    const result = await tool.run(
      { query: "APC p.E1317Q NOT retracted publication[pt]", max_results: 100, start: 0 },
      context,
    );
    const widened = (result.warnings ?? []).find((warning) => warning.includes("p.E1317Q"));
    expect(widened).toBeDefined();
    expect(widened).toContain("40362 hit(s)");
    expect(widened).toContain('"ann pancreat cancer"[Journal]');
    expect(result.data).toMatchObject({
      droppedPhrases: ["p.E1317Q"],
      queryTranslation:
        '("ann pancreat cancer"[Journal] OR "apc"[All Fields]) NOT "retracted publication"[Publication Type]',
    });
  });

  test("a quoted phrase NCBI could not match is named with NCBI's own message", () => {
    // Edit: the real single-hit esearch given the WarningList NCBI adds for an unmatched quoted phrase.
    const json = edit(
      sampleText("pubmed", "esearch_json_single_hit.json"),
      '"translationset":[]',
      '"translationset":[],"warninglist":{"phrasesignored":[],"quotedphrasesnotfound":["\\"MLH1 G67E splice\\""],"outputmessages":[]}',
    );
    const page = parseEsearchJson(answer(json));
    expect(widenedSearchWarnings(page, "PubMed")).toEqual([
      'PubMed (NCBI) says: quoted phrase "MLH1 G67E splice" was not found.',
    ]);
    expect(page.queryTranslation).toBe('"MLH1"[Title/Abstract] AND "G67E"[Title/Abstract]');
  });
});
