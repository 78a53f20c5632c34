/**
 * Small pieces the pages share: times, badges, truncated text with a link to the whole, write forms
 * with their CSRF token, pagers, and key/value lists. Every value goes through `html`, so it is escaped.
 */
import { html, type SafeHtml } from "./console-html.js";
import type { ConsoleContext } from "./console-route.js";

/** The most characters of third-party text a page shows inline before linking to the whole object. */
export const INLINE_TEXT_LIMIT = 4_000;

/**
 * A timestamp as `YYYY-MM-DD HH:MM:SS` UTC in a `<time>` element (the full ISO value in `datetime`).
 * @param iso an ISO-8601 time or epoch milliseconds
 */
export function time(iso: string | number | undefined): SafeHtml {
  if (iso === undefined || iso === "") return html`<span class="muted">—</span>`;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return html`${String(iso)}`;
  const text = date
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
  return html`<time datetime="${date.toISOString()}">${text}</time>`;
}

/**
 * A status badge: `ok`/`ready`/`completed` green, errors red, the rest neutral.
 * @param label the text
 * @param tone the colour
 */
export function badge(label: string, tone: "ok" | "error" | "warn" | "neutral" = "neutral"): SafeHtml {
  return html`<span class="badge badge-${tone}">${label}</span>`;
}

/**
 * Text cut at `limit` characters, with a link to the whole when it was cut.
 * @param text third-party text
 * @param fullHref where the whole text is (e.g. the object's raw view)
 * @param limit @default INLINE_TEXT_LIMIT
 */
export function truncated(text: string, fullHref: string | undefined, limit = INLINE_TEXT_LIMIT): SafeHtml {
  if (text.length <= limit) return html`<pre class="payload">${text}</pre>`;
  return html`<pre class="payload">${text.slice(0, limit)}</pre>
<p class="truncated">Showing ${limit.toLocaleString("en")} of ${text.length.toLocaleString("en")} characters.${
    fullHref ? html` <a href="${fullHref}">Open the whole object</a>.` : ""
  }</p>`;
}

/**
 * A POST form with the CSRF token, disabled (with the reason) when the console is read-only.
 * @param context the console's context
 * @param action the console path it posts to
 * @param label the button's text
 * @param fields hidden fields
 * @param options a confirmation text and a button style
 */
export function postForm(
  context: ConsoleContext,
  action: string,
  label: string,
  fields: Readonly<Record<string, string>> = {},
  options: { confirm?: string; danger?: boolean } = {},
): SafeHtml {
  const hidden = Object.entries(fields).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  );
  const disabled = context.writable
    ? ""
    : html` disabled title="Read-only console: start it with --writable"`;
  return html`<form method="post" action="${context.href(action)}" class="inline-form"${
    options.confirm ? html` data-confirm="${options.confirm}"` : ""
  }><input type="hidden" name="_csrf" value="${context.csrfToken}">${hidden}<button type="submit"${
    options.danger ? html` class="danger"` : ""
  }${disabled}>${label}</button></form>`;
}

/**
 * A definition list of label/value pairs (values may be markup).
 * @param rows the pairs; an `undefined` value is skipped
 */
export function facts(
  rows: readonly (readonly [string, SafeHtml | string | number | undefined])[],
): SafeHtml {
  const shown = rows.filter(([, value]) => value !== undefined && value !== "");
  return html`<dl class="facts">${shown.map(([label, value]) => html`<dt>${label}</dt><dd>${value}</dd>`)}</dl>`;
}

/**
 * A notice at the top of a page after a write (fixed messages chosen by code, never reflected text).
 * @param messages the page's codes and their messages
 * @param code the `done` query parameter
 */
export function notice(messages: Readonly<Record<string, string>>, code: string | null): SafeHtml {
  const message = code === null ? undefined : messages[code];
  return message === undefined ? html`` : html`<p class="notice" role="status">${message}</p>`;
}

/**
 * A byte count for people (`1.2 MiB`).
 * @param bytes a count of bytes
 */
export function bytes(bytes: number | undefined): string {
  if (bytes === undefined) return "—";
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * A third-party URL as a link only when it is `http:` or `https:`; any other scheme (`javascript:`,
 * `data:`, a relative path) renders as text, so a hostile record cannot put a script behind a click.
 * @param url the URL a record or citation gives
 * @param label the link text @default the URL
 */
export function externalLink(url: string, label: string = url): SafeHtml {
  let href: string | undefined;
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "http:" || parsed.protocol === "https:") href = parsed.href;
  } catch {
    href = undefined;
  }
  if (href === undefined) {
    return html`<span class="unsafe-url" title="Not an http(s) link: shown as text">${label}</span>`;
  }
  return html`<a href="${href}" rel="noopener noreferrer nofollow" target="_blank">${label}</a>`;
}

/**
 * Who a row's call was made for: the user (a link to that user's rows on `page`), or "single user"
 * for a row without a principal (the shared token, loopback, an app without identities).
 * @param context the console context
 * @param page the page filtered by the user (`/invocations`, `/permissions`)
 * @param principal the row's principal
 */
export function userLink(context: ConsoleContext, page: string, principal: string | undefined): SafeHtml {
  if (principal === undefined) return html`<span class="muted">single user</span>`;
  return html`<a href="${context.href(page, { user: principal })}" class="mono">${principal}</a>`;
}
