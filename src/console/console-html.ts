/**
 * The console's one way to make HTML: a tagged template that escapes every value it is given, so ledger
 * content (third-party text) can only ever render as text (see ARCHITECTURE.md, "The console").
 */

/** Markup the console made itself; the only value `html` inserts without escaping. */
export class SafeHtml {
  /** @param markup markup already escaped or written by the console */
  constructor(readonly markup: string) {}
  /** The markup. */
  toString(): string {
    return this.markup;
  }
}

/** What `html` accepts between its literals: text (escaped), markup, lists of both, or nothing. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/**
 * Escapes text for an HTML text node or a quoted attribute value.
 * @param text any text
 * @returns the text with `& < > " ' \`` replaced by entities
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

/**
 * Builds markup from a template: each interpolated value is escaped unless it is `SafeHtml`; arrays are
 * joined; `null`, `undefined` and `false` render nothing.
 * @example html`<td>${record.title}</td>` // a title "<script>" renders as the text "<script>"
 */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? "");
  return new SafeHtml(out);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof SafeHtml) return value.markup;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}
