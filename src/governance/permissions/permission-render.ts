/**
 * Fills a tool manifest's permission templates (`resourceTemplate`, `summaryTemplate`) with a call's
 * arguments, so that a card says what will actually happen and a grant names what it covers.
 */
import type { ToolManifest } from "../manifests/index.js";
import type { AuthorizationRequest } from "./authorization.js";
import { permissionRisk } from "./permission-policy.js";
import { permissionFingerprint } from "./permission-request.js";
import { PERMISSION_DECISIONS, type PermissionCard } from "./permission-types.js";

/** The rendered permission of one call. */
export interface RenderedPermission {
  /** The manifest's action, e.g. `pubmed:search`. */
  action: string;
  /** The full resource, e.g. `artifact:arxiv:2401.00001v1:papers/a.pdf`. */
  resource: string;
  /** What grants are keyed on: the first two `:` segments, e.g. `artifact:arxiv`. */
  normalizedResource: string;
  /** e.g. `Search PubMed for "brca1"`. */
  summary: string;
}

/** Longest text one placeholder may contribute (a card must stay readable). */
export const MAX_PLACEHOLDER_CHARS = 200;
/** Longest rendered resource or summary. */
export const MAX_RENDERED_CHARS = 500;

const PLACEHOLDER = /\{([A-Za-z0-9_.-]+)\}/g;
// Control and bidi-override characters could hide or reorder what a human reads on a card.
// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Fills `{name}` placeholders from `values`: strings as they are, numbers and booleans as text,
 * arrays joined with `separator`, objects as JSON; a missing, null or empty value renders as `""`
 * (runs of spaces are then collapsed).
 * Each value is sanitized (control characters removed, whitespace collapsed) and cut at
 * {@link MAX_PLACEHOLDER_CHARS}; the whole text at {@link MAX_RENDERED_CHARS}.
 * @param template text with `{name}` placeholders
 * @param values the call's arguments (and any context values)
 * @param separator between array items @default ", "
 * @returns the rendered text
 * @example
 * renderTemplate('Search PubMed for "{query}"', { query: "brca1" }); // 'Search PubMed for "brca1"'
 */
export function renderTemplate(
  template: string,
  values: Readonly<Record<string, unknown>>,
  separator = ", ",
): string {
  const text = template.replace(PLACEHOLDER, (_match, name: string) =>
    truncate(sanitize(stringify(lookup(values, name), separator)), MAX_PLACEHOLDER_CHARS),
  );
  // An empty value must not leave a double space in the middle of a sentence.
  return truncate(text.replace(/ {2,}/g, " ").trim(), MAX_RENDERED_CHARS);
}

/**
 * The grant key of a resource: its first two `:` segments (`pubmed:search`, `artifact:arxiv`).
 * @param resource a rendered resource
 * @returns the normalized resource (the whole resource when it has fewer than three segments)
 */
export function normalizeResource(resource: string): string {
  return resource.split(":").slice(0, 2).join(":");
}

/**
 * Renders the permission of one call from its tool manifest. Besides the arguments, the templates
 * may use `{sourceId}` and `{toolId}` (arguments of the same name win).
 * @param call the source, the tool manifest and the validated arguments
 * @returns action, full and normalized resource, and summary
 */
export function renderPermission(call: {
  sourceId: string;
  toolId: string;
  tool: Pick<ToolManifest, "permission">;
  input: Readonly<Record<string, unknown>>;
}): RenderedPermission {
  const values = { sourceId: call.sourceId, toolId: call.toolId, ...call.input };
  const { action, resourceTemplate, summaryTemplate } = call.tool.permission;
  const resource = renderTemplate(resourceTemplate, values, ",");
  return {
    action,
    resource,
    normalizedResource: normalizeResource(resource),
    summary: renderTemplate(summaryTemplate, values),
  };
}

function lookup(values: Readonly<Record<string, unknown>>, name: string): unknown {
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

/**
 * The approval card of one call: what a human is shown before a dangerous call runs.
 */

/**
 * Builds the approval card of a call from its rendered permission.
 * @param request the broker's description of the call
 * @param rendered `renderPermission(request)`
 * @returns the card; its `requestId` is stable for the same call (derived from the call's fingerprint)
 */
export function permissionCard(request: AuthorizationRequest, rendered: RenderedPermission): PermissionCard {
  return {
    type: "permission",
    requestId: `perm-${permissionFingerprint(request).slice(0, 32)}`,
    action: rendered.action,
    resource: rendered.resource,
    summary: rendered.summary,
    sourceId: request.sourceId,
    toolId: request.toolId,
    ...(request.toolCallId === undefined ? {} : { toolCallId: request.toolCallId }),
    args: request.input,
    risk: permissionRisk(request),
    allowedDecisions: [...PERMISSION_DECISIONS],
  };
}
