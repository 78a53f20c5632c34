/**
 * Server-side paging of the console's long lists (download jobs, extracted papers): the `page` query
 * parameter, the slice of one page and the links to the pages around it.
 */
import { GovernanceError } from "../core/index.js";
import { html, type SafeHtml } from "./console-html.js";
import type { ConsoleContext } from "./console-route.js";

/** Rows on one page of a list. */
export const ROWS_PER_PAGE = 100;

/** One page of a list. */
export interface ListPage<T> {
  items: T[];
  /** 1-based. */
  page: number;
  /** At least 1. */
  pages: number;
  total: number;
}

/**
 * The `page` query parameter.
 * @param url the request's URL
 * @returns the page number, 1 when absent or empty
 * @throws GovernanceError `INVALID_INPUT` for anything but a whole number from 1
 */
export function pageParam(url: URL): number {
  const raw = url.searchParams.get("page");
  if (raw === null || raw === "") return 1;
  if (!/^[1-9]\d{0,8}$/.test(raw)) {
    throw new GovernanceError(
      "INVALID_INPUT",
      "The page parameter must be a whole number from 1 (?page=2).",
      {
        data: { field: "page" },
      },
    );
  }
  return Number(raw);
}

/**
 * The items of one page.
 * @param items the whole list, in the order shown
 * @param page the 1-based page (past the last page gives no items)
 * @param size rows per page @default ROWS_PER_PAGE
 */
export function pageOf<T>(items: readonly T[], page: number, size = ROWS_PER_PAGE): ListPage<T> {
  return {
    items: items.slice((page - 1) * size, page * size),
    page,
    pages: Math.max(1, Math.ceil(items.length / size)),
    total: items.length,
  };
}

/**
 * Links to the previous and next pages (nothing when the list fits on one page).
 * @param context the console's context
 * @param path the list's console path
 * @param list the page shown
 */
export function pager(context: ConsoleContext, path: string, list: ListPage<unknown>): SafeHtml {
  if (list.pages <= 1 && list.page === 1) return html``;
  const link = (page: number, label: string, rel: string) =>
    html`<a href="${context.href(path, { page: page === 1 ? undefined : page })}" rel="${rel}">${label}</a>`;
  return html`<nav class="pager" aria-label="Pages">${list.page > 1 ? link(Math.min(list.page - 1, list.pages), "← Newer", "prev") : ""}<span class="muted">Page ${list.page} of ${list.pages}</span>${
    list.page < list.pages ? link(list.page + 1, "Older →", "next") : ""
  }</nav>`;
}
