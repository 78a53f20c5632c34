/**
 * The three read-only tools of the LLM Wiki bridge: `search` over the structured query
 * endpoint (hybrid mode, never the answer-generation endpoint), `get_page` and the budgeted `get_pages`.
 */
import { z } from "zod";
import type { McpRecord } from "../../contract/index.js";
import { canonicalJson, sha256Hex } from "../../core/index.js";
import { ProviderError } from "../sources/provider-error.js";
import type { WikiHttp } from "./wiki-http.js";
import { encodePagePath } from "./wiki-origin.js";
import { isObject, lacksSourcesOrUpdateTime, pagePathOf, wikiPageRecord } from "./wiki-records.js";

/** What a wiki tool returns before the server adds identity, licence and time. */
export interface WikiToolOutput {
  records: McpRecord[];
  warnings: string[];
  data?: Record<string, unknown>;
}

/** One wiki tool: its MCP name, input shape and implementation. */
export interface WikiTool<Shape extends z.ZodRawShape = z.ZodRawShape> {
  id: "search" | "get_page" | "get_pages";
  title: string;
  description: string;
  inputShape: Shape;
  run(input: z.output<z.ZodObject<Shape>>, http: WikiHttp, signal?: AbortSignal): Promise<WikiToolOutput>;
}

const blankToUndefined = (value: unknown) =>
  value === null || (typeof value === "string" && value.trim() === "") ? undefined : value;

const searchShape = {
  query: z.string().trim().min(1).max(2000).describe("What to look for in the wiki (free text)."),
  limit: z
    .preprocess(blankToUndefined, z.number().int().min(1).max(25).default(5))
    .describe("Number of pages to return (1-25, default 5)."),
};
const getPageShape = {
  path: z.string().min(1).max(1024).describe("The relative page path that search returned."),
};
const getPagesShape = {
  paths: z
    .array(z.string().min(1).max(1024))
    .min(1)
    .max(20)
    .describe("Relative page paths (1-20) that search returned."),
  max_tokens: z
    .preprocess(blankToUndefined, z.number().int().min(100).max(16000).default(8000))
    .describe("Token budget of the whole batch (100-16000, default 8000); pages past it are omitted."),
};

/** The hint added when a page lacks its sources or update time. */
export function getPageHint(paths: readonly string[]): string {
  return `Some pages lack sources or update times in this answer (${paths.join(", ")}); call get_page with a path to fill them in.`;
}

/** Turns page objects into records, dropping (with a warning) those whose path is unsafe or absent. */
function pageRecords(
  origin: string,
  pages: readonly unknown[],
  versionOf: (page: Record<string, unknown>) => string,
): { records: McpRecord[]; warnings: string[]; incomplete: string[]; paths: string[] } {
  const out = {
    records: [] as McpRecord[],
    warnings: [] as string[],
    incomplete: [] as string[],
    paths: [] as string[],
  };
  pages.forEach((page, index) => {
    const path = isObject(page) ? pagePathOf(page) : undefined;
    if (!isObject(page) || path === undefined) {
      out.warnings.push(`Skipped item #${index}: it has neither a path nor a page_id.`);
      return;
    }
    try {
      out.records.push(wikiPageRecord(origin, path, page, versionOf(page)));
      out.paths.push(path);
      if (lacksSourcesOrUpdateTime(page)) out.incomplete.push(path);
    } catch (error) {
      out.warnings.push(`Skipped item #${index}: ${(error as Error).message}`);
    }
  });
  return out;
}

const search: WikiTool<typeof searchShape> = {
  id: "search",
  title: "Search the LLM Wiki",
  description:
    "Search the LLM Wiki knowledge base (hybrid retrieval, no generated answer) and return the matching pages with their body, category, tags and source references as curated records.",
  inputShape: searchShape,
  async run(input, http, signal) {
    const body = { question: input.query, top_k: input.limit, mode: "hybrid" };
    const response = await http.request("POST", "/query/structured", body, signal);
    if (!isObject(response.json) || !Array.isArray(response.json.sources)) {
      throw new ProviderError(
        "upstream_unavailable",
        `The LLM Wiki at ${http.origin} answered the structured query without a 'sources' array.`,
      );
    }
    const { sources, ...rest } = response.json;
    const built = pageRecords(http.origin, sources, (page) => sha256Hex(canonicalJson(page)));
    const data: Record<string, unknown> = { ...rest, mode: "hybrid", returned: built.records.length };
    if (built.incomplete.length > 0) data.hint = getPageHint(built.incomplete);
    return { records: built.records, warnings: built.warnings, data };
  },
};

const getPage: WikiTool<typeof getPageShape> = {
  id: "get_page",
  title: "Read one LLM Wiki page",
  description:
    "Read one LLM Wiki page by its relative path: the page object (body, category, tags, sources, update time) as a curated record citing the page.",
  inputShape: getPageShape,
  async run(input, http, signal) {
    const encoded = encodePagePath(input.path);
    const response = await http.request("GET", `/wiki/${encoded}`, undefined, signal);
    const page = isObject(response.json) && isObject(response.json.page) ? response.json.page : response.json;
    if (!isObject(page)) {
      throw new ProviderError("upstream_unavailable", `The LLM Wiki at ${http.origin} sent no page object.`);
    }
    // The citation version is the hash of the exact bytes the wiki sent for this page.
    const record = wikiPageRecord(http.origin, input.path, page, sha256Hex(response.text));
    return { records: [record], warnings: [] };
  },
};

const getPages: WikiTool<typeof getPagesShape> = {
  id: "get_pages",
  title: "Read several LLM Wiki pages",
  description:
    "Read up to 20 LLM Wiki pages within a token budget. Returns the pages read, missing (pages that do not exist) and omitted_paths (pages not read because of the budget; they exist), with the budget statistics.",
  inputShape: getPagesShape,
  async run(input, http, signal) {
    input.paths.forEach((path, index) => {
      try {
        encodePagePath(path);
      } catch (error) {
        throw new ProviderError("invalid_input", `paths[${index}]: ${(error as Error).message}`);
      }
    });
    const body = { paths: input.paths, max_tokens: input.max_tokens, token_budget_enabled: true };
    const response = await http.request("POST", "/wiki/pages/batch", body, signal);
    if (!isObject(response.json) || !Array.isArray(response.json.pages)) {
      throw new ProviderError(
        "upstream_unavailable",
        `The LLM Wiki at ${http.origin} answered the batch request without a 'pages' array.`,
      );
    }
    const { pages, missing: rawMissing, omitted_paths: rawOmitted, ...stats } = response.json;
    const built = pageRecords(http.origin, pages, (page) => sha256Hex(canonicalJson(page)));
    const missing = stringList(rawMissing);
    const seen = new Set([...built.paths, ...missing].map(normalizePath));
    // A page neither read nor missing was left out by the budget: it exists and get_pages/get_page can read it.
    const omitted = new Set(stringList(rawOmitted));
    for (const path of input.paths) if (!seen.has(normalizePath(path))) omitted.add(path);
    const data: Record<string, unknown> = {
      ...stats,
      requested: input.paths.length,
      returned: built.records.length,
      missing,
      omitted_paths: [...omitted],
    };
    if (built.incomplete.length > 0) data.hint = getPageHint(built.incomplete);
    return { records: built.records, warnings: built.warnings, data };
  },
};

/** The bridge's tools, in listing order. */
export const WIKI_TOOLS: readonly WikiTool[] = [search, getPage, getPages] as unknown as readonly WikiTool[];

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function normalizePath(path: string): string {
  try {
    return encodePagePath(path);
  } catch {
    return path;
  }
}
