/** Offset paging fields that every source's `data` carries the same way. */

/** The `data` paging fields of an offset-paged result. */
// A type alias, not an interface, so that it fits `data: Record<string, unknown>`.
export type OffsetPaging = {
  total: number;
  start: number;
  returned: number;
  hasMore: boolean;
  /** Present only when `hasMore`. */
  nextStart?: number;
};

/**
 * Paging fields of one page.
 * @param page `total` hits, the page's `start` offset, how many items were `fetched` from the provider,
 *   how many were `returned` as records (default: fetched), and how far the provider lets one page
 *   (`reachable`, default: total)
 * @returns `{total, start, returned, hasMore, nextStart?}`
 */
export function offsetPaging(page: {
  total: number;
  start: number;
  fetched: number;
  returned?: number;
  reachable?: number;
}): OffsetPaging {
  const nextStart = page.start + page.fetched;
  const hasMore = page.fetched > 0 && nextStart < Math.min(page.total, page.reachable ?? page.total);
  return {
    total: page.total,
    start: page.start,
    returned: page.returned ?? page.fetched,
    hasMore,
    ...(hasMore ? { nextStart } : {}),
  };
}
