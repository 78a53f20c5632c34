/** The arXiv tools: `search`, `lookup` and `prepare_paper_download`. */
import { z } from "zod";
import type { ArtifactCandidate } from "../../../contract/index.js";
import { invalidId } from "../identifiers.js";
import { idListInput, maxResultsInput, queryInput, sortInput, startInput } from "../input-schemas.js";
import { offsetPaging } from "../paging.js";
import { ProviderError } from "../provider-error.js";
import type { SourceHttp } from "../source-module.js";
import { defineTool } from "../source-module.js";
import { type ArxivEntry, type ArxivFeed, parseArxivFeed } from "./arxiv-feed-parser.js";
import { type ArxivId, arxivPdfUrl, normalizeArxivId } from "./arxiv-ids.js";

/** The API serves at most the first 30,000 results of a query. */
const ARXIV_MAX_REACHABLE = 30_000;
const ID_FORMS = "an arXiv id (1605.08386, astro-ph/0601001, arXiv:1605.08386v2 or an arxiv.org URL)";

/** `arxiv_search`: the arXiv API query with paging. */
export const arxivSearchTool = defineTool({
  id: "search",
  title: "Search arXiv",
  description:
    "Search arXiv preprints (physics, mathematics, computer science, quantitative biology, statistics, ...) and " +
    "return title, authors, abstract, categories, versions and DOI. Pages with start/max_results.",
  inputShape: {
    query: queryInput(
      "arXiv query: words, or fielded terms such as ti:transformer AND au:vaswani (fields ti, au, abs, cat, all).",
    ),
    max_results: maxResultsInput(10, 100),
    start: startInput(ARXIV_MAX_REACHABLE - 1),
    sort: sortInput,
  },
  async run(input, { http }) {
    const start = input.start ?? 0;
    const feed = await queryFeed(http, {
      search_query: input.query,
      start,
      max_results: input.max_results,
      sortBy: input.sort === "date" ? "submittedDate" : "relevance",
      sortOrder: "descending",
    });
    const warnings: string[] = [];
    if (feed.entries.length === 0 && feed.total > start) {
      warnings.push("arXiv reported more results than it returned on this page; retrying later may help.");
    }
    return {
      records: feed.entries.map((entry) => entry.record),
      warnings,
      data: {
        ...offsetPaging({
          total: feed.total,
          start,
          fetched: feed.entries.length,
          reachable: ARXIV_MAX_REACHABLE,
        }),
      },
    };
  },
});

/** `arxiv_lookup`: papers by id (old and new style, with or without version), with per-id failures. */
export const arxivLookupTool = defineTool({
  id: "lookup",
  title: "Look up arXiv papers",
  description:
    "Fetch arXiv papers by id (up to 50): new (1605.08386) or old style (astro-ph/0601001), with or without " +
    "version (v2), arXiv: prefix or arxiv.org URL. Ids that fail are listed in data.failed with a reason.",
  inputShape: {
    ids: idListInput(
      50,
      "arXiv ids (1-50): 1605.08386, 1605.08386v2, astro-ph/0601001, arXiv:… or arxiv.org URLs.",
    ),
  },
  async run(input, { http }) {
    const failed: { id: string; reason: string }[] = [];
    const wanted: ArxivId[] = [];
    for (const raw of input.ids) {
      const parsed = normalizeArxivId(raw);
      if (!parsed) failed.push({ id: raw, reason: "invalid_id" });
      else if (!wanted.some((w) => w.id === parsed.id && w.version === parsed.version)) wanted.push(parsed);
    }
    if (wanted.length === 0) invalidId(input.ids[0] ?? "", ID_FORMS);
    const feed = await queryFeed(http, { id_list: wanted.map(idText).join(","), max_results: wanted.length });
    const entries: ArxivEntry[] = [];
    for (const want of wanted) {
      const entry = feed.entries.find((e) => e.id === want.id && (want.version ?? e.version) === e.version);
      if (!entry) failed.push({ id: idText(want), reason: "not_found" });
      else if (!entries.includes(entry)) entries.push(entry);
    }
    if (entries.length === 0)
      throw new ProviderError("not_found", "arXiv has no paper for any requested id.");
    return {
      records: entries.map((entry) => entry.record),
      warnings:
        failed.length > 0 ? [`${failed.length} of ${input.ids.length} id(s) failed; see data.failed.`] : [],
      data: { requested: input.ids.length, returned: entries.length, failed },
    };
  },
});

/** `arxiv_prepare_paper_download`: the PDF candidate of one paper version (never downloads). */
export const arxivPreparePaperDownloadTool = defineTool({
  id: "prepare_paper_download",
  title: "Plan an arXiv paper download",
  description:
    "Plan the download of an arXiv paper's PDF: confirms the paper and returns a download candidate (HTTPS URL of " +
    "the exact version, format, licence when arXiv states it) for artifact_download. Downloads nothing.",
  inputShape: {
    id: z
      .string()
      .trim()
      .min(1)
      .describe("An arXiv id (1605.08386, 1605.08386v2, astro-ph/0601001) or arxiv.org URL."),
  },
  async run(input, { http }) {
    const wanted = normalizeArxivId(input.id) ?? invalidId(input.id, ID_FORMS);
    const feed = await queryFeed(http, { id_list: idText(wanted), max_results: 1 });
    const entry = feed.entries.find((e) => e.id === wanted.id);
    if (!entry) throw new ProviderError("not_found", `arXiv has no paper ${idText(wanted)}.`);
    // The versioned URL names immutable bytes; the bare id would follow later revisions.
    const versioned = `${entry.id}v${entry.version}`;
    const candidate: ArtifactCandidate = {
      candidateId: `arxiv:${versioned}:pdf`,
      sourceId: "arxiv",
      sourceRecordId: entry.id,
      url: arxivPdfUrl(versioned),
      format: "pdf",
      kind: "paper",
      filename: `${versioned.replace("/", "_")}.pdf`,
    };
    const warnings: string[] = [];
    if (entry.license) candidate.license = entry.license;
    else {
      warnings.push(
        "arXiv did not state this paper's licence; its authors chose one when submitting (see the abstract page).",
      );
    }
    return {
      records: [entry.record],
      artifacts: [candidate],
      warnings,
      data: { id: entry.id, version: entry.version },
    };
  },
});

async function queryFeed(http: SourceHttp, query: Record<string, string | number>): Promise<ArxivFeed> {
  // The API answers a malformed id with HTTP 400 and an Atom error entry; read it rather than fail blind.
  const response = await http.request("api", "/query", {
    query,
    accept: "application/atom+xml",
    acceptStatuses: [400],
  });
  const feed = parseArxivFeed(response);
  if (response.status === 400 || (feed.errors.length > 0 && feed.entries.length === 0)) {
    const code = "id_list" in query ? "invalid_id" : "invalid_input";
    throw new ProviderError(code, "arXiv rejected the request as malformed.", { status: response.status });
  }
  return feed;
}

function idText(id: ArxivId): string {
  return id.version === undefined ? id.id : `${id.id}v${id.version}`;
}
