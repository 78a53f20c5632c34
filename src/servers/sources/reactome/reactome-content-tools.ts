/** The Reactome ContentService tools: `search_pathways` and `lookup_pathway`. */
import { z } from "zod";
import { invalidId } from "../identifiers.js";
import { maxResultsInput, optionalInput, queryInput, startInput } from "../input-schemas.js";
import { ProviderError } from "../provider-error.js";
import { defineTool } from "../source-module.js";
import { parseReactomeEvent, parseReactomeSearch } from "./reactome-content-parser.js";
import { normalizeReactomeId } from "./reactome-ids.js";

const DEFAULT_SPECIES = "Homo sapiens";
const ID_FORMS = "a Reactome stable id (R-HSA-5673001, R-HSA-5673001.4, a reactome.org URL) or database id";

/** `reactome_search_pathways`: full-text search of Reactome pathways. */
export const reactomeSearchPathwaysTool = defineTool({
  id: "search_pathways",
  title: "Search Reactome pathways",
  description:
    "Search the Reactome pathway knowledgebase (curated, peer-reviewed biological pathways) by name, gene, " +
    "protein or process, in one species (default Homo sapiens). Returns pathway names, stable ids and summary " +
    "snippets. Pages with start/max_results.",
  inputShape: {
    query: queryInput(
      "Words to search for: a process (apoptosis), a gene or protein (BRAF, P15056), a disease.",
    ),
    species: optionalInput(z.string().trim().min(1).max(100)).describe(
      'Species as Reactome names it (default "Homo sapiens"; "Mus musculus", ...); "all" for every species.',
    ),
    max_results: maxResultsInput(10, 50),
    start: startInput(9_999),
  },
  async run(input, { http }) {
    const start = input.start ?? 0;
    const species = input.species ?? DEFAULT_SPECIES;
    // Reactome answers a search without hits with HTTP 404: that is an empty result, not a missing record.
    const response = await http.request("content", "/search/query", {
      query: {
        query: input.query,
        species: species.toLowerCase() === "all" ? undefined : species,
        types: "Pathway",
        cluster: "true",
        start,
        rows: input.max_results,
      },
      accept: "application/json",
      acceptStatuses: [404],
    });
    const page =
      response.status === 404 ? { total: 0, records: [], skipped: 0 } : parseReactomeSearch(response);
    const warnings: string[] = [];
    if (page.skipped > 0) warnings.push(`${page.skipped} hit(s) without a stable id were left out.`);
    const returned = page.records.length + page.skipped;
    const nextStart = start + returned;
    // Without a count, a full page is the only sign that more hits exist.
    const hasMore =
      returned > 0 && (page.total === undefined ? returned >= input.max_results : nextStart < page.total);
    return {
      records: page.records,
      warnings,
      data: {
        ...(page.total === undefined ? {} : { total: page.total }),
        species,
        start,
        returned: page.records.length,
        hasMore,
        ...(hasMore ? { nextStart } : {}),
      },
    };
  },
});

/** `reactome_lookup_pathway`: one pathway (or reaction) with summary, literature and sub-events. */
export const reactomeLookupPathwayTool = defineTool({
  id: "lookup_pathway",
  title: "Look up a Reactome pathway",
  description:
    "Fetch one Reactome pathway (or reaction) by stable id (R-HSA-5673001, versioned, or a reactome.org URL): " +
    "name, species, curated summary, authors, release date, GO biological process, literature (PMIDs), " +
    "disease flags and its sub-pathways and reactions.",
  inputShape: {
    id: z
      .string()
      .trim()
      .min(1)
      .max(300)
      .describe("A Reactome stable id (R-HSA-5673001, R-HSA-5673001.4) or reactome.org URL."),
  },
  async run(input, { http }) {
    const wanted = normalizeReactomeId(input.id) ?? invalidId(input.id, ID_FORMS);
    const response = await http.request("content", `/data/query/${encodeURIComponent(wanted.id)}`, {
      accept: "application/json",
      acceptStatuses: [404],
    });
    if (response.status === 404) {
      throw new ProviderError("not_found", `Reactome has no object ${wanted.id}.`, { status: 404 });
    }
    const record = parseReactomeEvent(response);
    const warnings: string[] = [];
    const current = record.primaryCitation.version;
    if (wanted.version !== undefined && current !== undefined && String(wanted.version) !== current) {
      warnings.push(
        `${wanted.id}.${wanted.version} was asked for; Reactome serves only the current release, where it is ` +
          `${record.identifier}.${current}.`,
      );
    }
    return { records: [record], warnings, data: { id: record.identifier, version: current ?? null } };
  },
});
