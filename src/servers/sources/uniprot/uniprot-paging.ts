/**
 * UniProt's cursor paging: the next page is named by the `cursor` parameter of the `Link: <…>; rel="next"`
 * response header, and the total by `X-Total-Results`. The shared `ProviderResponse` does not carry response
 * headers yet, so they are read only when present; the total then falls back to the `reviewed` facet counts
 * of the body.
 */
import type { ProviderResponse } from "../source-module.js";

/** What a search answer says about further pages. */
export interface UniprotPaging {
  /** The query's total, from `X-Total-Results` or else from the facet counts. */
  total: number | undefined;
  /** Whether the answer could tell where the next page starts (a `Link` header was readable). */
  isCursorKnown: boolean;
  /** The `cursor` of the next page, when there is one. */
  nextCursor: string | undefined;
}

/**
 * The `cursor` parameter of the `rel="next"` link of a `Link` header.
 * @param link the header value, e.g. `<https://rest.uniprot.org/uniprotkb/search?query=x&cursor=abc&size=2>; rel="next"`
 * @returns the cursor (`abc`), or undefined when there is no next link or it has no cursor
 */
export function nextCursorOf(link: string | undefined): string | undefined {
  for (const part of (link ?? "").split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]+)>\s*;(.*)$/.exec(part);
    if (!match?.[1] || !/\brel\s*=\s*"?next"?/i.test(match[2] ?? "")) continue;
    try {
      return new URL(match[1], "https://rest.uniprot.org").searchParams.get("cursor") ?? undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * The paging facts of a search answer.
 * @param response the provider response
 * @param facetTotal the total computed from the body's facets, when it had them
 * @returns total, whether the next cursor is known, and the next cursor
 */
export function uniprotPaging(response: ProviderResponse, facetTotal: number | undefined): UniprotPaging {
  const link = response.headers?.get("link") ?? undefined;
  const headerTotal = Number(response.headers?.get("x-total-results") ?? Number.NaN);
  const hasHeaders = response.headers !== undefined;
  return {
    total: Number.isInteger(headerTotal) && headerTotal >= 0 ? headerTotal : facetTotal,
    // Without a Link header UniProt is on the last page; that is knowable only when headers are exposed.
    isCursorKnown: hasHeaders,
    nextCursor: nextCursorOf(link),
  };
}
