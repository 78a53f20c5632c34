/** The PubMed query tools: `search`, `fetch_abstracts` and `find_related`. */
import { z } from "zod";
import { invalidId } from "../identifiers.js";
import { idListInput, maxResultsInput, queryInput, sortInput, startInput } from "../input-schemas.js";
import { elink, esearch, widenedSearchWarnings } from "../ncbi/eutils.js";
import { offsetPaging } from "../paging.js";
import { ProviderError } from "../provider-error.js";
import { defineTool } from "../source-module.js";
import { fetchPubmedArticles } from "./pubmed-articles.js";
import { normalizePmid } from "./pubmed-ids.js";

/** ESearch serves only the first 10,000 hits of a query. */
const PUBMED_MAX_REACHABLE = 10_000;

const RELATION_LINKNAMES = {
  similar: "pubmed_pubmed",
  cited_by: "pubmed_pubmed_citedin",
  references: "pubmed_pubmed_refs",
} as const;

/** `pubmed_search`: ESearch, then EFetch of the hits' records with abstracts. */
export const pubmedSearchTool = defineTool({
  id: "search",
  title: "Search PubMed",
  description:
    "Search PubMed (MEDLINE and life-science journals) and return the hits with title, authors, journal, year, " +
    "abstract, DOI, PMCID, e-publication date, trial registrations, comment/erratum links and MeSH major topics. " +
    "Pages with start/max_results.",
  inputShape: {
    query: queryInput(
      "PubMed query; Entrez syntax works (field tags such as [ti], [au], [mh]; AND, OR, NOT).",
    ),
    max_results: maxResultsInput(10, 100),
    start: startInput(PUBMED_MAX_REACHABLE - 1),
    sort: sortInput,
  },
  async run(input, { http }) {
    const start = input.start ?? 0;
    const sort = input.sort === "date" ? "pub_date" : input.sort;
    const page = await esearch(http, {
      db: "pubmed",
      term: input.query,
      start,
      max: input.max_results,
      sort,
    });
    const { records, missing } = await fetchPubmedArticles(http, page.ids);
    const warnings: string[] = [];
    warnings.push(...widenedSearchWarnings(page, "PubMed"));
    if (missing.length > 0) warnings.push(`${missing.length} hit(s) could not be fetched and are left out.`);
    const paging = offsetPaging({
      total: page.total,
      start,
      fetched: page.ids.length,
      returned: records.length,
      reachable: PUBMED_MAX_REACHABLE,
    });
    if (page.total > PUBMED_MAX_REACHABLE && !paging.hasMore) {
      warnings.push("PubMed pages only through the first 10,000 hits; narrow the query to reach the rest.");
    }
    return {
      records,
      warnings,
      data: {
        ...paging,
        ...(page.queryTranslation ? { queryTranslation: page.queryTranslation } : {}),
        ...(page.dropped.length > 0 ? { droppedPhrases: page.dropped } : {}),
      },
    };
  },
});

/** `pubmed_fetch_abstracts`: records of up to 50 PMIDs, with per-id failures. */
export const pubmedFetchAbstractsTool = defineTool({
  id: "fetch_abstracts",
  title: "Fetch PubMed abstracts",
  description:
    "Fetch PubMed records (title, authors, journal, year, abstract, DOI, PMCID, e-publication date, trial " +
    "registrations, comment/erratum links, MeSH major topics) for up to 50 PMIDs. " +
    "Ids that fail are listed in data.failed with a reason.",
  inputShape: {
    pmids: idListInput(50, "PMIDs (1-50): 12345678, PMID:12345678 or a pubmed.ncbi.nlm.nih.gov URL."),
  },
  async run(input, { http }) {
    const failed: { id: string; reason: string }[] = [];
    const pmids: string[] = [];
    for (const raw of input.pmids) {
      const pmid = normalizePmid(raw);
      if (!pmid) failed.push({ id: raw, reason: "invalid_id" });
      else if (!pmids.includes(pmid)) pmids.push(pmid);
    }
    if (pmids.length === 0) invalidId(input.pmids[0] ?? "", "a PubMed identifier (PMID)");
    const { records, missing } = await fetchPubmedArticles(http, pmids);
    for (const pmid of missing) failed.push({ id: pmid, reason: "not_found" });
    if (records.length === 0)
      throw new ProviderError("not_found", "PubMed has no record for any requested PMID.");
    return {
      records,
      warnings:
        failed.length > 0 ? [`${failed.length} of ${input.pmids.length} id(s) failed; see data.failed.`] : [],
      data: { requested: input.pmids.length, returned: records.length, failed },
    };
  },
});

/** `pubmed_find_related`: ELink neighbours, citing articles or references, with their records. */
export const pubmedFindRelatedTool = defineTool({
  id: "find_related",
  title: "Find related PubMed articles",
  description:
    "Find PubMed articles related to one PMID: similar (PubMed's computed neighbours), cited_by (articles in " +
    "PubMed Central that cite it) or references (its reference list, known when PMC holds the full text).",
  inputShape: {
    pmid: z
      .string()
      .trim()
      .min(1)
      .describe("The PMID: 12345678, PMID:12345678 or a pubmed.ncbi.nlm.nih.gov URL."),
    relation: z.enum(["similar", "cited_by", "references"]).describe("similar, cited_by or references."),
    max_results: maxResultsInput(10, 100),
    start: startInput(9_999),
  },
  async run(input, { http }) {
    const pmid = normalizePmid(input.pmid) ?? invalidId(input.pmid, "a PubMed identifier (PMID)");
    const linkname = RELATION_LINKNAMES[input.relation];
    // The similar list starts with the article itself.
    const links = (await elink(http, { dbfrom: "pubmed", db: "pubmed", id: pmid, linkname })).filter(
      (id) => id !== pmid,
    );
    const start = input.start ?? 0;
    const page = links.slice(start, start + input.max_results);
    // Fetching the article itself with its neighbours tells "no links" apart from "no such article".
    const { records, missing } = await fetchPubmedArticles(http, [pmid, ...page]);
    if (missing.includes(pmid)) throw new ProviderError("not_found", `PubMed has no record PMID:${pmid}.`);
    const related = records.filter((record) => record.identifier !== pmid);
    const warnings: string[] = [];
    if (links.length === 0 && input.relation === "references") {
      warnings.push(
        "PubMed lists references only when PubMed Central holds the full text; none are known here.",
      );
    }
    if (missing.length > 0) warnings.push(`${missing.length} linked article(s) could not be fetched.`);
    return {
      records: related,
      warnings,
      data: {
        pmid,
        relation: input.relation,
        ...offsetPaging({ total: links.length, start, fetched: page.length, returned: related.length }),
      },
    };
  },
});
