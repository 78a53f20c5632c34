/** XML parsing of provider answers (fast-xml-parser), with the few helpers every XML source needs. */
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { ProviderError } from "./provider-error.js";
import type { ProviderAnswer } from "./source-module.js";

/** A parsed XML element: attributes as `@_name`, text as `#text` (or the element is a plain string). */
export type XmlNode = Record<string, unknown>;

/** How to parse one provider's XML. */
export interface XmlParseOptions {
  /** The root element the answer must have; anything else is a malformed answer. */
  root: string;
  /** Elements that may repeat, always parsed as arrays. */
  arrayTags?: readonly string[];
  /** Elements with inline markup (`<i>`, `<sup>`), kept raw for `markupText` so word order survives. */
  markupTags?: readonly string[];
  /** Drop namespace prefixes (`opensearch:totalResults` → `totalResults`). @default false */
  removeNamespacePrefix?: boolean;
}

/**
 * Parses and validates an XML answer.
 * @param answer the body, provider host and HTTP status
 * @param options root, repeating elements and markup elements
 * @returns the root element
 * @throws ProviderError `upstream_unavailable` (with the HTTP status, so that the broker does not retry a
 *   malformed 200) when the body is not well-formed or has another root
 */
export function parseXml(answer: ProviderAnswer, options: XmlParseOptions): XmlNode {
  const { text, host, status } = answer;
  const malformed = (reason: string) =>
    new ProviderError("upstream_unavailable", `${host} sent a malformed XML answer (${reason}).`, { status });
  if (XMLValidator.validate(text) !== true) throw malformed("not well-formed");
  const arrays = new Set(options.arrayTags ?? []);
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "@_",
    parseTagValue: false,
    parseAttributeValue: false,
    htmlEntities: true,
    removeNSPrefix: options.removeNamespacePrefix ?? false,
    stopNodes: (options.markupTags ?? []).map((tag) => `*.${tag}`),
    isArray: (name) => arrays.has(name),
  });
  const document = parser.parse(text) as XmlNode;
  const root = document[options.root];
  if (root === undefined) throw malformed(`no <${options.root}> element`);
  // An empty root element parses as "", which is a valid, empty answer.
  return typeof root === "object" && root !== null ? (root as XmlNode) : {};
}

/**
 * The text of an element that has no markup.
 * @param node a parsed element (string, number, or object with `#text`)
 * @returns the trimmed text, or undefined when absent or empty
 */
export function xmlText(node: unknown): string | undefined {
  if (typeof node === "string" || typeof node === "number") return String(node).trim() || undefined;
  if (typeof node === "object" && node !== null && "#text" in node)
    return xmlText((node as XmlNode)["#text"]);
  return undefined;
}

/**
 * The readable text of a `markupTags` element: tags removed, entities decoded, whitespace collapsed.
 * @param node a parsed markup element (raw inner XML, or an object with raw `#text`)
 * @returns the text, or undefined when empty
 */
export function markupText(node: unknown): string | undefined {
  const raw = xmlText(node);
  if (raw === undefined) return undefined;
  const text = decodeEntities(raw.replace(/<[^>]*>/g, ""))
    .replace(/\s+/g, " ")
    .trim();
  return text || undefined;
}

/**
 * An attribute of an element.
 * @param node a parsed element
 * @param name the attribute name without prefix
 * @returns the value, or undefined
 */
export function xmlAttr(node: unknown, name: string): string | undefined {
  if (typeof node !== "object" || node === null) return undefined;
  const value = (node as XmlNode)[`@_${name}`];
  return typeof value === "string" ? value : undefined;
}

/**
 * A child element as a list, whether it is absent, single or repeated.
 * @param value a parsed child
 * @returns the list
 */
export function asArray(value: unknown): unknown[] {
  if (value === undefined || value === null || value === "") return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * A parsed value as an element object.
 * @param value a parsed value
 * @returns the element, or an empty object when the value is absent, text-only or a list
 */
export function asNode(value: unknown): XmlNode {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as XmlNode) : {};
}

/**
 * A child element as an object.
 * @param node a parsed element
 * @param name the child's name
 * @returns the child, or an empty object when absent or text-only
 */
export function child(node: unknown, name: string): XmlNode {
  return asNode(asNode(node)[name]);
}

const NAMED_ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

// Markup elements bypass the parser's decoding (they are stop nodes) and it exposes no decoder: decode here.
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, body: string) => {
    if (body[0] === "#") {
      const code =
        body[1] === "x" || body[1] === "X" ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? entity;
  });
}
