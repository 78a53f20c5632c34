/**
 * Europe PMC `search` calls with cursor paging, shared by the europe-pmc source and the preprint sources
 * (which reach Europe PMC through their own endpoint, so that their base URL is configured with them).
 */
import type { SourceHttp } from "../source-module.js";
import { type EuropePmcPage, parseEuropePmcSearch } from "./europe-pmc-search-parser.js";

/** Europe PMC's cursor of a first page. */
const FIRST_CURSOR = "*";

/** One search request. */
export interface EuropePmcSearchParams {
  /** The full Europe PMC query (the tool's filters already added). */
  query: string;
  pageSize: number;
  /** The `nextCursor` of the previous page. @default FIRST_CURSOR */
  cursor?: string | undefined;
  /** `date` sorts by publication date, newest first. @default relevance */
  sort?: "relevance" | "date" | undefined;
}

/** The paging facts a search tool puts in `data`. */
export interface CursorPaging {
  total: number;
  returned: number;
  cursor: string;
  hasMore: boolean;
  nextCursor?: string;
}

/**
 * Runs one Europe PMC search (`resultType=core`, so that hits carry abstracts).
 * @param http the source's HTTP client
 * @param endpointKey the key of the source's Europe PMC REST endpoint
 * @param params query, page size, cursor and sort
 * @returns the page
 * @throws ProviderError `invalid_input` (Europe PMC rejected the query or cursor), `rate_limited`,
 *   `upstream_unavailable`
 */
export async function searchEuropePmc(
  http: SourceHttp,
  endpointKey: string,
  params: EuropePmcSearchParams,
): Promise<EuropePmcPage> {
  const response = await http.request(endpointKey, "/search", {
    query: {
      query: params.query,
      format: "json",
      resultType: "core",
      pageSize: params.pageSize,
      cursorMark: params.cursor ?? FIRST_CURSOR,
      sort: params.sort === "date" ? "P_PDATE_D desc" : undefined,
    },
    accept: "application/json",
  });
  return parseEuropePmcSearch(response);
}

/**
 * The paging of a page. Europe PMC repeats the sent cursor on the last page; a short page is the last too.
 * @param page the parsed page
 * @param params the request it answers
 * @param returned how many records the tool returns for it (after any filtering)
 * @returns total, returned, hasMore and the next cursor when there is more
 */
export function cursorPaging(
  page: EuropePmcPage,
  params: EuropePmcSearchParams,
  returned: number,
): CursorPaging {
  const cursor = params.cursor ?? FIRST_CURSOR;
  const received = page.hits.length + page.skipped;
  const next = page.nextCursor;
  const hasMore =
    next !== undefined &&
    next !== cursor &&
    received >= params.pageSize &&
    !(cursor === FIRST_CURSOR && page.total <= received);
  return { total: page.total, returned, cursor, hasMore, ...(hasMore ? { nextCursor: next } : {}) };
}
