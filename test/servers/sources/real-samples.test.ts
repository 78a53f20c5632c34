/**
 * The parsers over real provider answers captured in ../shared/fixtures/providers (see README.txt in each
 * folder for their origin). Skipped, visibly, when that folder is not next to the repository.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { parseArxivFeed } from "../../../src/servers/sources/arxiv/arxiv-feed-parser.js";
import { eutilsJson, parseElinkJson, parseEsearchJson } from "../../../src/servers/sources/ncbi/eutils.js";
import { isProviderError } from "../../../src/servers/sources/provider-error.js";
import { parsePmcOaAnswer } from "../../../src/servers/sources/pubmed/pmc-oa-parser.js";
import { parsePubmedArticles } from "../../../src/servers/sources/pubmed/pubmed-article-parser.js";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { resultUrls, SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const hasSamples = existsSync(SHARED_PROVIDER_SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SHARED_PROVIDER_SAMPLES} not found)`;

function sample(source: string, file: string, status = 200): ProviderAnswer {
  return {
    text: readFileSync(path.join(SHARED_PROVIDER_SAMPLES, source, file), "utf8"),
    host: "sample",
    status,
  };
}

function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isProviderError(error) ? error.code : "not a ProviderError";
  }
  return undefined;
}

describe.skipIf(!hasSamples)(`real PubMed samples${suffix}`, () => {
  test("EFetch 22663011: structured abstract, authors with entities, collective author, DOI", () => {
    const [record, ...rest] = parsePubmedArticles(sample("pubmed", "efetch_pubmed_xml_22663011.xml"));
    expect(rest).toEqual([]);
    expect(record).toMatchObject({
      identifier: "22663011",
      title: "Improved survival with MEK inhibition in BRAF-mutated melanoma.",
      url: "https://pubmed.ncbi.nlm.nih.gov/22663011/",
      year: 2012,
      contentScope: "abstract",
      peerReviewStatus: "peer-reviewed",
      crossReferences: [{ identifier: "10.1056/NEJMoa1203421", identifierType: "doi" }],
      structuredData: { journal: "The New England journal of medicine", volume: "367", pages: "107-14" },
    });
    expect(record?.authors?.[0]).toBe("Flaherty KT");
    expect(record?.authors).toContain("Becker JC");
    expect(record?.authors?.at(-1)).toBe("METRIC Study Group");
    expect(record?.abstract?.split("\n\n").map((part) => part.split(":")[0])).toEqual([
      "BACKGROUND",
      "METHODS",
      "RESULTS",
      "CONCLUSIONS",
    ]);
    expect(record?.abstract).toContain("P<0.001");
  });

  test("ESearch JSON: totals, ids and unmatched phrases", () => {
    const many = parseEsearchJson(sample("pubmed", "esearch_json_count40362_retmax100.json"));
    expect(many).toMatchObject({ total: 40362, start: 0, phrasesNotFound: 1 });
    expect(many.ids).toHaveLength(100);
    expect(many.ids[0]).toBe("42555032");
    expect(parseEsearchJson(sample("pubmed", "esearch_json_single_hit.json"))).toEqual({
      total: 1,
      start: 0,
      ids: ["18033691"],
      phrasesNotFound: 0,
      dropped: [],
      notices: [],
      queryTranslation: '"MLH1"[Title/Abstract] AND "G67E"[Title/Abstract]',
    });
  });

  test("NCBI's over-limit body is rate_limited; JSON without linksets is malformed", () => {
    const overLimit = sample("pubmed", "error_rate_limit_exceeded.json", 429);
    expect(errorCode(() => eutilsJson(overLimit))).toBe("rate_limited");
    expect(
      errorCode(() => parseElinkJson(sample("pubmed", "esearch_json_single_hit.json"), "pubmed_pubmed")),
    ).toBe("upstream_unavailable");
  });

  test("the PMC OA service's idIsNotOpenAccess is not_open_access", () => {
    expect(errorCode(() => parsePmcOaAnswer(sample("pubmed", "pmc_oa_fcgi_error_not_open_access.xml")))).toBe(
      "not_open_access",
    );
  });

  test("an ESummary document is not an EFetch answer: malformed, not an empty success", () => {
    expect(errorCode(() => parsePubmedArticles(sample("pubmed", "esummary_xml_v1_two_pmids.xml")))).toBe(
      "upstream_unavailable",
    );
  });
});

describe.skipIf(!hasSamples)(`real arXiv samples${suffix}`, () => {
  test("id_list 1605.08386: one new-style entry with version, categories and authors", () => {
    const feed = parseArxivFeed(sample("arxiv", "query_id_list_1605.08386.atom"));
    expect(feed).toMatchObject({ total: 1, start: 0, errors: [] });
    expect(feed.entries.map((e) => [e.id, e.version])).toEqual([["1605.08386", 1]]);
    expect(feed.entries[0]?.record).toMatchObject({
      title: "Heat-bath random walks with Markov bases",
      authors: ["Caprice Stanley", "Tobias Windisch"],
      year: 2016,
      peerReviewStatus: "preprint",
      primaryCitation: { label: "[arXiv:1605.08386v1](https://arxiv.org/abs/1605.08386v1)" },
      structuredData: {
        primaryCategory: "math.CO",
        categories: ["math.CO", "math.ST"],
        comment: "20 pages, 3 figures",
      },
    });
  });

  test("old-style astro-ph/0601001: id, journal reference, decoded and trimmed abstract", () => {
    const [entry] = parseArxivFeed(sample("arxiv", "query_id_list_old_style_astro-ph_0601001.atom")).entries;
    expect(entry?.id).toBe("astro-ph/0601001");
    expect(entry?.record.url).toBe("https://arxiv.org/abs/astro-ph/0601001");
    expect(entry?.record.structuredData).toMatchObject({ journalRef: "ActaAstron.56:1-50,2006" });
    expect(entry?.record.abstract).toMatch(/^We derive the frequencies/);
    expect(entry?.record.abstract).toContain("Gould & Morgan (2003)");
    expect(entry?.record.abstract).toContain("V_max<17.5");
  });

  test("no results and the 400 error feed", () => {
    expect(parseArxivFeed(sample("arxiv", "query_id_list_no_results.atom"))).toEqual({
      total: 0,
      start: 0,
      entries: [],
      errors: [],
    });
    const error = parseArxivFeed(sample("arxiv", "query_error_400_bad_id.atom", 400));
    expect(error.entries).toEqual([]);
    expect(error.errors).toEqual(["incorrect id format for abc"]);
  });

  test("a search page: ten HTTPS records on arXiv/doi.org hosts, DOIs where arXiv has them", () => {
    const feed = parseArxivFeed(sample("arxiv", "query_search_testing_start0_max10.atom"));
    expect(feed.total).toBe(214881);
    expect(feed.entries).toHaveLength(10);
    expect(feed.entries.filter((e) => e.record.crossReferences.length === 1)).toHaveLength(6);
    const urls = resultUrls({ records: feed.entries.map((e) => e.record) });
    for (const url of urls) expect(["arxiv.org", "doi.org"]).toContain(new URL(url).hostname);
  });
});
