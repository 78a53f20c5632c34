/**
 * Fills a manifest's permission templates with a call's arguments: the readable texts of a card
 * (sanitized and cut so that a human can read them) and the exact grant scope (never cut).
 */
import { posix } from "node:path";
import { PLACEHOLDER_PATTERN, type TemplateFilter } from "../manifests/index.js";

/** Longest text one placeholder may contribute (a card must stay readable). */
export const MAX_PLACEHOLDER_CHARS = 200;
/** Longest rendered resource or summary. */
export const MAX_RENDERED_CHARS = 500;
/** Longest grant scope; a longer one falls back to the tool-wide default. */
const MAX_SCOPE_CHARS = 2_000;

// Control and bidi-override characters could hide or reorder what a human reads on a card.
// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: detecting them is the point
const HAS_UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/;
const COUNT = new Intl.NumberFormat("en-US");
// Marks an empty placeholder while tidying (rendered values never hold control characters).
const EMPTY = "\u0000";
// biome-ignore lint/suspicious/noControlCharactersInRegex: the marker is a control character on purpose
const EMPTY_AFTER_SEPARATOR = /, ?\u0000/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the marker is a control character on purpose
const EMPTY_BEFORE_SEPARATOR = /\u0000, ?/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the marker is a control character on purpose
const EMPTY_AT_END = /: ?\u0000$/;

type Values = Readonly<Record<string, unknown>>;

/**
 * Fills `{name}` placeholders from `values`: strings as they are, numbers and booleans as text,
 * arrays joined with `separator`, objects as JSON; a missing, null or empty value renders as `""`
 * (runs of spaces, and a `, ` or a final `: ` next to an empty value, are then removed). `{name|filter}` applies one of
 * `TEMPLATE_FILTERS` (`arg`, `size`, `dir`, `origin`).
 * Each value is sanitized (control characters removed, whitespace collapsed) and cut at
 * {@link MAX_PLACEHOLDER_CHARS}; the whole text at {@link MAX_RENDERED_CHARS}.
 * @param template text with `{name}` placeholders
 * @param values the call's arguments (and any context values)
 * @param separator between array items @default ", "
 * @returns the rendered text
 * @example
 * renderTemplate('Search PubMed for "{query}"', { query: "brca1" }); // 'Search PubMed for "brca1"'
 * renderTemplate("write {path|arg}, {content|size}", { path: "/tmp/a", content: "hi" }); // 'write path "/tmp/a", content 2 characters'
 */
export function renderTemplate(template: string, values: Values, separator = ", "): string {
  const text = template.replace(PLACEHOLDER_PATTERN, (_match, name: string, filter?: string) => {
    const rendered = renderPlaceholder(
      name,
      filter as TemplateFilter | undefined,
      lookup(values, name),
      separator,
    );
    return rendered === "" ? EMPTY : rendered;
  });
  // An empty value must not leave a double space, or a dangling list separator, in a sentence.
  const tidy = text
    .replace(EMPTY_AFTER_SEPARATOR, "")
    .replace(EMPTY_BEFORE_SEPARATOR, "")
    .replace(EMPTY_AT_END, "")
    .replaceAll(EMPTY, "")
    .replace(/ {2,}/g, " ")
    .trim();
  return truncate(tidy, MAX_RENDERED_CHARS);
}

/**
 * Fills a scope template exactly: no value is cut or altered, because a grant keyed on a cut value
 * would cover calls nobody approved. In each value `%` and `:` are percent-encoded, so `:` keeps
 * separating the template's parts unambiguously.
 * @param template a `scopeTemplate`
 * @param values the call's arguments (and context values)
 * @returns the scope, or `undefined` when a placeholder is empty (absent argument, relative path, URL
 *   that is not http(s)) or holds control characters, or the scope is too long
 */
export function renderScope(template: string, values: Values): string | undefined {
  let complete = true;
  const scope = template.replace(PLACEHOLDER_PATTERN, (_match, name: string, filter?: string) => {
    const raw = scopeValue(lookup(values, name), filter as TemplateFilter | undefined);
    if (raw === "" || HAS_UNSAFE.test(raw)) complete = false;
    return raw.replace(/%/g, "%25").replace(/:/g, "%3A");
  });
  return complete && scope.length <= MAX_SCOPE_CHARS ? scope : undefined;
}

/**
 * The readable value of one scope placeholder, for the card's description of what a grant covers.
 * @param value the argument
 * @param filter its filter
 * @returns the sanitized, cut text
 */
export function scopeDisplayValue(value: unknown, filter: TemplateFilter | undefined): string {
  return truncate(sanitize(scopeValue(value, filter)), MAX_PLACEHOLDER_CHARS);
}

/**
 * The directory of an absolute POSIX path, normalized (`..` and `.` resolved lexically).
 * @param value a path argument
 * @returns the directory, or `""` for anything but an absolute path
 */
export function pathDirectory(value: unknown): string {
  if (typeof value !== "string" || !value.startsWith("/")) return "";
  return posix.dirname(posix.normalize(value));
}

/**
 * The origin of an http(s) URL.
 * @param value a URL argument
 * @returns e.g. `https://example.org`, or `""`
 */
export function urlOrigin(value: unknown): string {
  if (typeof value !== "string" || !URL.canParse(value)) return "";
  const url = new URL(value);
  return url.protocol === "http:" || url.protocol === "https:" ? url.origin : "";
}

function scopeValue(value: unknown, filter: TemplateFilter | undefined): string {
  if (filter === "dir") return pathDirectory(value);
  if (filter === "origin") return urlOrigin(value);
  return stringify(value, ",");
}

function renderPlaceholder(
  name: string,
  filter: TemplateFilter | undefined,
  value: unknown,
  separator: string,
): string {
  if (filter === "dir") return cut(pathDirectory(value));
  if (filter === "origin") return cut(urlOrigin(value));
  if (value === undefined || value === null || value === "") return "";
  const label = cut(name);
  if (filter === "size") return `${label} ${size(value, separator)}`;
  if (filter === "arg") {
    if (typeof value === "string") {
      return value.length > MAX_PLACEHOLDER_CHARS
        ? `${label} ${size(value, separator)}`
        : `${label} "${cut(value)}"`;
    }
    if (Array.isArray(value) && value.length > 0 && value.some((v) => typeof v === "object")) {
      return `${label} ${size(value, separator)}`;
    }
    return `${label} ${cut(stringify(value, separator))}`;
  }
  return cut(stringify(value, separator));
}

function size(value: unknown, separator: string): string {
  if (Array.isArray(value)) return `${COUNT.format(value.length)} ${value.length === 1 ? "item" : "items"}`;
  const n = Array.from(stringify(value, separator)).length;
  return `${COUNT.format(n)} ${n === 1 ? "character" : "characters"}`;
}

function cut(text: string): string {
  return truncate(sanitize(text), MAX_PLACEHOLDER_CHARS);
}

function lookup(values: Values, name: string): unknown {
  return Object.hasOwn(values, name) ? values[name] : undefined;
}

function stringify(value: unknown, separator: string): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
    return String(value);
  }
  if (Array.isArray(value)) {
    return value
      .map((item) => stringify(item, separator))
      .filter((item) => item !== "")
      .join(separator);
  }
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
}

function sanitize(text: string): string {
  return text.replace(UNSAFE, " ").replace(/\s+/g, " ").trim();
}

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  // Count code points, so a surrogate pair is never split.
  const points = Array.from(text);
  return points.length <= max ? text : `${points.slice(0, max - 1).join("")}…`;
}
