/**
 * The placeholder syntax of a manifest's permission templates: `{name}` fills in an argument,
 * `{name|filter}` a view of it. Shared by the manifest schema (which checks templates) and the
 * permission renderer (which fills them).
 */

/**
 * The filters a placeholder may apply:
 * - `arg`: the argument with its name, `path "/tmp/x/a.txt"` (a string longer than the placeholder
 *   limit shows as its size instead), or nothing when absent;
 * - `size`: the argument's size with its name, `content 1,234 characters` (`n items` for a list);
 * - `dir`: the directory of an absolute POSIX path, after `path.posix.normalize`
 *   (`/tmp/x/../y/a.txt` → `/tmp/y`); nothing for a relative path;
 * - `origin`: the origin of an http(s) URL (`https://example.org`); nothing for anything else.
 */
export const TEMPLATE_FILTERS = ["arg", "size", "dir", "origin"] as const;

/** One of {@link TEMPLATE_FILTERS}. */
export type TemplateFilter = (typeof TEMPLATE_FILTERS)[number];

/** The placeholder pattern: `{name}` or `{name|filter}` (the filter is checked separately). */
export const PLACEHOLDER_PATTERN = /\{([A-Za-z0-9_.-]+)(?:\|([A-Za-z0-9_-]*))?\}/g;

/** One placeholder of a template. */
export interface TemplatePlaceholder {
  /** The argument (or context value) it reads. */
  name: string;
  /** The filter as written, `undefined` for a bare `{name}`. */
  filter: string | undefined;
}

/**
 * The placeholders of a template, in order.
 * @param template a permission template
 * @returns each `{name}` / `{name|filter}` occurrence
 */
export function templatePlaceholders(template: string): TemplatePlaceholder[] {
  return Array.from(template.matchAll(PLACEHOLDER_PATTERN), (m) => ({
    name: m[1] as string,
    filter: m[2],
  }));
}

/**
 * Whether a written filter is one of {@link TEMPLATE_FILTERS}.
 * @param filter the filter text after `|`
 */
export function isTemplateFilter(filter: string): filter is TemplateFilter {
  return (TEMPLATE_FILTERS as readonly string[]).includes(filter);
}
