/**
 * What a PubMed record keeps that a scientist checks (the electronic publication date beside the print date,
 * trial registry numbers, comment and erratum links, MeSH major topics), and one display form for authors
 * across PubMed and Europe PMC. Runs the real answers of ../shared/fixtures/providers, some realistically
 * edited in place here where the real record lacks a field (each edit is named where it is made). Skipped,
 * visibly, without the samples.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { europePmcRecord } from "../../../src/servers/sources/europe-pmc/europe-pmc-record.js";
import { parseEuropePmcSearch } from "../../../src/servers/sources/europe-pmc/europe-pmc-search-parser.js";
import { parsePubmedArticles } from "../../../src/servers/sources/pubmed/pubmed-article-parser.js";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const hasSamples = existsSync(SHARED_PROVIDER_SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SHARED_PROVIDER_SAMPLES} not found)`;

const sampleText = (source: string, file: string) =>
  readFileSync(path.join(SHARED_PROVIDER_SAMPLES, source, file), "utf8");
const answer = (text: string): ProviderAnswer => ({ text, host: "sample", status: 200 });
const efetch = () => sampleText("pubmed", "efetch_pubmed_xml_22663011.xml");

/** Replaces `from` (which must occur in the sample) so an edit that stops matching fails loudly. */
function edit(text: string, from: string, to: string): string {
  expect(text).toContain(from);
  return text.replace(from, to);
}

function pubmedRecord(xml: string) {
  const [record] = parsePubmedArticles(answer(xml));
  expect(record).toBeDefined();
  return record as NonNullable<typeof record>;
}

describe.skipIf(!hasSamples)(`PubMed record details${suffix}`, () => {
  test("the real EFetch of 22663011 keeps its e-publication date, trial number, comments and MeSH major topics", () => {
    const data = pubmedRecord(efetch()).structuredData;
    // Print issue 12 Jul 2012; published online 4 Jun 2012 (ArticleDate DateType="Electronic").
    expect(data).toMatchObject({
      publicationDate: "2012 Jul 12",
      electronicPublicationDate: "2012-06-04",
      publicationModel: "Print-Electronic",
      trialRegistrations: [
        {
          registry: "ClinicalTrials.gov",
          id: "NCT01245062",
          url: "https://clinicaltrials.gov/study/NCT01245062",
        },
      ],
    });
    expect(data?.commentsCorrections).toEqual([
      {
        type: "CommentIn",
        pmid: "22663012",
        citation: "N Engl J Med. 2012 Jul 12;367(2):171-2. doi: 10.1056/NEJMe1205654.",
        url: "https://pubmed.ncbi.nlm.nih.gov/22663012/",
      },
      {
        type: "CommentIn",
        pmid: "23034028",
        citation: "N Engl J Med. 2012 Oct 4;367(14):1364; author reply 1365. doi: 10.1056/NEJMc1209663.",
        url: "https://pubmed.ncbi.nlm.nih.gov/23034028/",
      },
      {
        type: "CommentIn",
        pmid: "23034029",
        citation: "N Engl J Med. 2012 Oct 4;367(14):1364-5. doi: 10.1056/NEJMc1209663.",
        url: "https://pubmed.ncbi.nlm.nih.gov/23034029/",
      },
    ]);
    // The real record stars qualifiers only (MajorTopicYN="Y" on QualifierName).
    expect(data?.meshMajorTopics).toEqual([
      "Antineoplastic Agents/therapeutic use",
      "MAP Kinase Kinase 1/antagonists & inhibitors",
      "MAP Kinase Kinase 2/antagonists & inhibitors",
      "Melanoma/drug therapy",
      "Protein Kinase Inhibitors/therapeutic use",
      "Proto-Oncogene Proteins B-raf/genetics",
      "Pyridones/therapeutic use",
      "Pyrimidinones/therapeutic use",
    ]);
    const headings = data?.meshHeadings as { descriptor: string }[];
    expect(headings).toHaveLength(20);
    expect(headings.find((heading) => heading.descriptor === "Melanoma")).toEqual({
      descriptor: "Melanoma",
      descriptorUi: "D008545",
      majorTopic: false,
      qualifiers: [
        { name: "drug therapy", ui: "Q000188", majorTopic: true },
        { name: "genetics", ui: "Q000235", majorTopic: false },
        { name: "mortality", ui: "Q000401", majorTopic: false },
      ],
    });
  });

  test("without an ArticleDate the e-publication date comes from the epublish, else aheadofprint, history date", () => {
    // Edit: the real record's ArticleDate removed and an epublish (then aheadofprint) PubMedPubDate added to
    // its real History, as PubMed writes them for records whose Article carries no electronic date.
    const noArticleDate = edit(
      efetch(),
      '<ArticleDate DateType="Electronic"><Year>2012</Year><Month>06</Month><Day>04</Day></ArticleDate>',
      "",
    );
    for (const status of ["epublish", "aheadofprint"]) {
      const xml = edit(
        noArticleDate,
        "<History>",
        `<History><PubMedPubDate PubStatus="${status}"><Year>2012</Year><Month>6</Month><Day>4</Day></PubMedPubDate>`,
      );
      expect(pubmedRecord(xml).structuredData?.electronicPublicationDate).toBe("2012-06-04");
    }
    expect(pubmedRecord(noArticleDate).structuredData).not.toHaveProperty("electronicPublicationDate");
  });

  test("every trial registry is kept, linked where the registry has a canonical page; other data banks apart", () => {
    // Edit: ISRCTN, EudraCT, ANZCTR and GenBank DataBank entries added after the real ClinicalTrials.gov one.
    const xml = edit(
      efetch(),
      "</DataBank></DataBankList>",
      "</DataBank><DataBank><DataBankName>ISRCTN</DataBankName><AccessionNumberList><AccessionNumber>ISRCTN12345678</AccessionNumber></AccessionNumberList></DataBank>" +
        "<DataBank><DataBankName>EudraCT</DataBankName><AccessionNumberList><AccessionNumber>2010-020565-31</AccessionNumber></AccessionNumberList></DataBank>" +
        "<DataBank><DataBankName>ANZCTR</DataBankName><AccessionNumberList><AccessionNumber>ACTRN12610000123456</AccessionNumber></AccessionNumberList></DataBank>" +
        "<DataBank><DataBankName>GENBANK</DataBankName><AccessionNumberList><AccessionNumber>JQ000001</AccessionNumber><AccessionNumber>JQ000002</AccessionNumber></AccessionNumberList></DataBank></DataBankList>",
    );
    const data = pubmedRecord(xml).structuredData;
    expect(data?.trialRegistrations).toEqual([
      {
        registry: "ClinicalTrials.gov",
        id: "NCT01245062",
        url: "https://clinicaltrials.gov/study/NCT01245062",
      },
      { registry: "ISRCTN", id: "ISRCTN12345678", url: "https://www.isrctn.com/ISRCTN12345678" },
      {
        registry: "EudraCT",
        id: "2010-020565-31",
        url: "https://www.clinicaltrialsregister.eu/ctr-search/search?query=2010-020565-31",
      },
      { registry: "ANZCTR", id: "ACTRN12610000123456" },
    ]);
    expect(data?.dataBankAccessions).toEqual([
      { dataBank: "GENBANK", accession: "JQ000001" },
      { dataBank: "GENBANK", accession: "JQ000002" },
    ]);
  });

  test("erratum, update and comment links are all kept by type; the erratum still flags the record", () => {
    // Edit: ErratumIn (made-up PMID 99999996), UpdateOf and a Cites entry (a reference-list item) added first
    // in the real CommentsCorrectionsList.
    const xml = edit(
      efetch(),
      "<CommentsCorrectionsList>",
      '<CommentsCorrectionsList><CommentsCorrections RefType="ErratumIn"><RefSource>N Engl J Med. 2012 Aug 16;367(7):680</RefSource><PMID Version="1">99999996</PMID></CommentsCorrections>' +
        '<CommentsCorrections RefType="UpdateOf"><RefSource>J Clin Oncol. 2011;29(15 suppl):8500</RefSource></CommentsCorrections>' +
        '<CommentsCorrections RefType="Cites"><RefSource>N Engl J Med. 2011;364:2507-16</RefSource><PMID Version="1">21639808</PMID></CommentsCorrections>',
    );
    const record = pubmedRecord(xml);
    const links = record.structuredData?.commentsCorrections as {
      type: string;
      pmid?: string;
      url?: string;
    }[];
    expect(links.map((link) => [link.type, link.pmid])).toEqual([
      ["ErratumIn", "99999996"],
      ["UpdateOf", undefined],
      ["CommentIn", "22663012"],
      ["CommentIn", "23034028"],
      ["CommentIn", "23034029"],
    ]);
    expect(links[0]?.url).toBe("https://pubmed.ncbi.nlm.nih.gov/99999996/");
    expect(record.structuredData?.integrity).toEqual({
      status: "corrected",
      notices: [
        {
          type: "erratum",
          pmid: "99999996",
          citation: "N Engl J Med. 2012 Aug 16;367(7):680",
          url: "https://pubmed.ncbi.nlm.nih.gov/99999996/",
        },
      ],
    });
  });

  test("a starred descriptor is a major topic by itself", () => {
    // Edit: the real Mutation heading's descriptor starred (MajorTopicYN="Y").
    const xml = edit(
      efetch(),
      '<DescriptorName UI="D009154" MajorTopicYN="N">Mutation</DescriptorName>',
      '<DescriptorName UI="D009154" MajorTopicYN="Y">Mutation</DescriptorName>',
    );
    const data = pubmedRecord(xml).structuredData;
    expect(data?.meshMajorTopics).toContain("Mutation");
    const headings = (data?.meshHeadings ?? []) as { descriptor: string }[];
    expect(headings.find((h) => h.descriptor === "Mutation")).toEqual({
      descriptor: "Mutation",
      descriptorUi: "D009154",
      majorTopic: true,
      qualifiers: [],
    });
  });
});

/** The NLM author list of PMID 22663011, in the order and form PubMed's own citation gives it. */
const NLM_AUTHORS_22663011 = [
  "Flaherty KT",
  "Robert C",
  "Hersey P",
  "Nathan P",
  "Garbe C",
  "Milhem M",
  "Demidov LV",
  "Hassel JC",
  "Rutkowski P",
  "Mohr P",
  "Dummer R",
  "Trefzer U",
  "Larkin JM",
  "Utikal J",
  "Dreno B",
  "Nyakas M",
  "Middleton MR",
  "Becker JC",
  "Casey M",
  "Sherman LJ",
  "Wu FS",
  "Ouellet D",
  "Martin AM",
  "Patel K",
  "Schadendorf D",
  "METRIC Study Group",
];

// Edit of the real Europe PMC lite hit (PMID 20516115) into Europe PMC's hit for PMID 22663011: id, pmid,
// pmcid, doi and title replaced; authorString replaced by the NLM author list Europe PMC copies from MEDLINE.
function europePmcHitOf22663011(core: boolean) {
  let json = sampleText("europepmc", "search_lite_pmid_20516115.json");
  json = json.replaceAll("20516115", "22663011");
  json = edit(json, '"pmcid":"PMC3040717",', "");
  json = edit(json, '"fullTextIdList":{"fullTextId":["PMC3040717"]},', "");
  json = edit(
    json,
    '"authorString":"Lee MS, Green R, Marsillac SM, Coquelle N, Williams RS, Yeung T, Foo D, Hau DD, Hui B, Monteiro AN, Glover JN."',
    `"authorString":"${NLM_AUTHORS_22663011.join(", ")}."`,
  );
  if (core) {
    // Edit: a core answer's authorList, written as Europe PMC's core answers write authors (fullName,
    // firstName, lastName, initials; collectiveName for a group), from PubMed's own author parts.
    const parts = pubmedRecord(efetch()).structuredData?.authorDetails as Record<string, string>[];
    const authorList = parts.map((part) =>
      part.collective
        ? { collectiveName: part.collective }
        : {
            fullName: `${part.family} ${part.initials}`,
            firstName: part.given,
            lastName: part.family,
            initials: part.initials,
          },
    );
    json = edit(
      json,
      '"journalTitle"',
      `"authorList":${JSON.stringify({ author: authorList })},"journalTitle"`,
    );
  }
  const [hit] = parseEuropePmcSearch(answer(json)).hits;
  return europePmcRecord(hit as NonNullable<typeof hit>);
}

describe.skipIf(!hasSamples)(`one author form across PubMed and Europe PMC${suffix}`, () => {
  test("PubMed writes every author family name then initials, the collective author as written", () => {
    const record = pubmedRecord(efetch());
    expect(record.authors).toEqual(NLM_AUTHORS_22663011);
    const details = record.structuredData?.authorDetails as unknown[];
    expect(details[0]).toEqual({ family: "Flaherty", given: "Keith T", initials: "KT" });
    expect(details[17]).toEqual({ family: "Becker", given: "Jürgen C", initials: "JC" });
    expect(details.at(-1)).toEqual({ collective: "METRIC Study Group" });
    // Edit: ORCID's documented example iD given to the first author, in the URL form PubMed often writes.
    const withOrcid = edit(
      efetch(),
      "<Initials>KT</Initials>",
      '<Initials>KT</Initials><Identifier Source="ORCID">https://orcid.org/0000-0002-1825-0097</Identifier>',
    );
    const withOrcidDetails = (pubmedRecord(withOrcid).structuredData?.authorDetails ?? []) as unknown[];
    expect(withOrcidDetails[0]).toEqual({
      family: "Flaherty",
      given: "Keith T",
      initials: "KT",
      orcid: "0000-0002-1825-0097",
    });
  });

  test("the same article from Europe PMC (lite and core) names every author exactly as PubMed does", () => {
    const pubmed = pubmedRecord(efetch());
    const lite = europePmcHitOf22663011(false);
    const core = europePmcHitOf22663011(true);
    expect(lite.authors).toEqual(pubmed.authors);
    expect(core.authors).toEqual(pubmed.authors);
    expect(core.structuredData?.authorDetails).toEqual(pubmed.structuredData?.authorDetails);
  });

  test("the real Europe PMC lite hit keeps Europe PMC's own display form", () => {
    const [hit] = parseEuropePmcSearch(
      answer(sampleText("europepmc", "search_lite_pmid_20516115.json")),
    ).hits;
    expect(hit?.authors.slice(0, 3)).toEqual(["Lee MS", "Green R", "Marsillac SM"]);
  });
});
