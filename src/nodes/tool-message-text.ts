/**
 * The text a model reads for one governed tool result: each fact once, the citation labels and
 * content scopes kept, every warning verbatim, governance bookkeeping (licence "unknown", timestamps,
 * flags) left to the full result that code reads from the message's `artifact`.
 */
import type { ArtifactCandidate, McpRecord, McpToolResult } from "../contract/index.js";
import { type GovernedContentBlock, neutralizePromptTags } from "../governance/envelope/index.js";

/** Record fields the record lines already say; `authorDetails` repeats `authors` at length. */
const SAID_BY_RECORD = new Set(["authorDetails"]);
/** Author names shown per record. */
const MAX_AUTHORS = 10;

/**
 * Renders a normalized result for the model. A result without records or candidates whose data is a
 * server's own content (a server without a manifest) passes that content through: its text once, and
 * its `structuredContent` only when it says something the text does not. The whole text is made inert
 * the way the envelope makes result strings inert (`neutralizePromptTags`), a line that opens with a
 * chat role (`Human:`) loses its colon, and record fields are flattened to one line each so that no
 * server string can forge a line of its own.
 * @param invocationId the invocation to cite (`artifact_download`, `reviewEvidence`)
 * @param result the normalized result
 * @returns the text of the tool message
 * @example
 * toolResultText("0b6c…", result);
 * // mcpInvocationId: 0b6c…
 * // total: 57
 * // hasMore: true
 * // nextStart: 2
 * // [1] [PMID:39000001](https://pubmed.ncbi.nlm.nih.gov/39000001/) Base editing corrects HBB mutations…
 * //   Müller J; Okafor A · 2024 · abstract · peer-reviewed
 */
export function toolResultText(invocationId: string, result: McpToolResult): string {
  const lines = [`mcpInvocationId: ${invocationId}`];
  const passedThrough = passThroughText(result);
  if (passedThrough !== undefined) {
    lines.push(...result.warnings.map((warning) => `warning: ${oneLine(warning)}`), passedThrough);
    return inert(lines.join("\n"));
  }
  if (result.sourceVersion !== undefined) lines.push(`sourceVersion: ${oneLine(result.sourceVersion)}`);
  lines.push(...result.warnings.map((warning) => `warning: ${oneLine(warning)}`));
  if (result.data !== undefined) {
    // The numbered records say how many came back.
    const { returned, ...data } = result.data;
    const said = returned === result.records.length ? {} : { returned };
    lines.push(...fieldLines({ ...data, ...said }, ""));
  }
  if (result.records.length === 0 && (result.artifacts?.length ?? 0) === 0) lines.push("no records");
  result.records.forEach((record, index) => {
    lines.push(...recordLines(record, index + 1));
  });
  for (const candidate of result.artifacts ?? []) lines.push(candidateLine(candidate));
  return inert(lines.join("\n"));
}

/**
 * A line that opens with a chat role (`Human:`, `Assistant:`), as a completion-style prompt reads turns.
 * Only blanks (no line breaks) may precede the role, so each line start is scanned once: linear time.
 */
const ROLE_LINE = /(^|[\r\n])([ \t]*)(Human|Assistant|System|User)([ \t]*):/g;

/**
 * The emitted text made inert as a whole: reserved tags and chat tokens (`neutralizePromptTags`, which
 * also catches a tag assembled across two fields), and role lines, whose colon becomes `꞉` (U+A789);
 * a server's text keeps its line breaks, so a line of it could otherwise speak as a turn.
 * @param text text a server sent
 * @returns the text, inert
 */
export function inert(text: string): string {
  return neutralizePromptTags(text).replace(ROLE_LINE, "$1$2$3$4\uA789");
}

function recordLines(record: McpRecord, number: number): string[] {
  const label = record.primaryCitation.label;
  const lines = [`[${number}] ${oneLine(label)} ${oneLine(record.title)}`];
  const facts = [
    record.authors?.length ? authorsText(record.authors) : undefined,
    record.year === undefined ? undefined : String(record.year),
    record.contentScope,
    record.peerReviewStatus === "unknown" ? undefined : record.peerReviewStatus,
  ].filter((part) => part !== undefined);
  lines.push(`  ${facts.join(" · ")}`);
  // The label's text, not its link, is what the model cites by.
  const labelText = /^\[([^\]]*)\]/.exec(label)?.[1] ?? label;
  if (!labelText.includes(record.identifier)) {
    lines.push(`  id: ${record.identifierType} ${oneLine(record.identifier)}`);
  }
  if (record.url !== record.primaryCitation.url) lines.push(`  url: ${record.url}`);
  const others = record.citations.filter((citation) => citation.label !== label);
  if (others.length > 0) lines.push(`  also cite: ${others.map((c) => oneLine(c.label)).join(" ")}`);
  if (record.abstract) lines.push(`  abstract: ${oneLine(record.abstract)}`);
  if (record.crossReferences.length > 0) {
    const refs = record.crossReferences.map((ref) => `${ref.identifierType} ${oneLine(ref.identifier)}`);
    lines.push(`  see also: ${refs.join("; ")}`);
  }
  if (record.structuredData !== undefined) {
    // A field equal to the identifier, the title or a cross-reference (pmid, doi, ...) is said above.
    const said = new Set([
      record.identifier,
      record.title,
      ...record.crossReferences.map((ref) => ref.identifier),
      ...record.citations.flatMap((citation) => citation.identifier ?? []),
    ]);
    const data = Object.entries(record.structuredData).filter(
      ([key, value]) => !SAID_BY_RECORD.has(key) && !(typeof value === "string" && said.has(value)),
    );
    lines.push(...fieldLines(Object.fromEntries(data), "  "));
  }
  lines.push(...record.warnings.map((warning) => `  warning: ${oneLine(warning)}`));
  return lines;
}

/** Up to ten names; the rest are counted (the artifact has them all). */
function authorsText(authors: readonly string[]): string {
  const shown = authors.slice(0, MAX_AUTHORS).map(oneLine).join("; ");
  return authors.length > MAX_AUTHORS ? `${shown}; … (${authors.length} authors)` : shown;
}

function candidateLine(candidate: ArtifactCandidate): string {
  const facts = [
    `${candidate.kind} ${candidate.format}`,
    candidate.filename,
    candidate.sizeBytes === undefined ? undefined : `${candidate.sizeBytes} bytes`,
    candidate.license === undefined ? undefined : `licence ${candidate.license}`,
    candidate.url,
  ].filter((part) => part !== undefined);
  return `candidate ${candidate.candidateId} (record ${candidate.sourceRecordId}): ${facts.map(oneLine).join(" · ")}`;
}

/** One `key: value` line per field, empty values left out. */
function fieldLines(fields: Record<string, unknown>, indent: string): string[] {
  return Object.entries(fields)
    .map(([key, value]) => [key, compact(value)] as const)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${indent}${oneLine(key)}: ${scalarText(value)}`);
}

/** A scalar as text, a list of scalars joined by "; ", anything else as compact JSON. */
function scalarText(value: unknown): string {
  if (typeof value === "string") return oneLine(value);
  if (Array.isArray(value) && value.every((item) => typeof item !== "object" || item === null)) {
    return value.map((item) => (typeof item === "string" ? oneLine(item) : String(item))).join("; ");
  }
  return typeof value === "object" && value !== null ? JSON.stringify(value) : String(value);
}

/** The value without empty strings, arrays, objects and nulls (at any depth); undefined when nothing is left. */
function compact(value: unknown): unknown {
  if (value === null || value === undefined || value === "") return undefined;
  if (Array.isArray(value)) {
    const items = value.map(compact).filter((item) => item !== undefined);
    return items.length === 0 ? undefined : items;
  }
  if (typeof value === "object") {
    const entries = Object.entries(value)
      .map(([key, inner]) => [key, compact(inner)] as const)
      .filter(([, inner]) => inner !== undefined);
    return entries.length === 0 ? undefined : Object.fromEntries(entries);
  }
  return value;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * The server's own content of a result without records or candidates (the envelope keeps it as
 * `data.content`, governed blocks): the texts, then the structured content unless the texts say it.
 */
function passThroughText(result: McpToolResult): string | undefined {
  if (result.records.length > 0 || (result.artifacts?.length ?? 0) > 0) return undefined;
  const data = result.data;
  if (data === undefined || !Array.isArray(data.content)) return undefined;
  if (Object.keys(data).some((key) => key !== "content" && key !== "structuredContent")) return undefined;
  const texts = (data.content as GovernedContentBlock[]).map(blockText);
  const text = texts.join("\n");
  const structured = data.structuredContent;
  if (structured === undefined || saysAll(text, structured)) return text;
  return `${text}\nstructuredContent: ${JSON.stringify(structured)}`;
}

/**
 * A governed block as the text the model reads: text as it is, media and blobs described (the bytes
 * travel as content blocks of their own, see `toolMessageContent`), links and embedded texts named.
 */
function blockText(block: GovernedContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
    case "audio":
      return `[${block.type}: ${block.mimeType}, ${block.bytes} bytes, sha256:${block.sha256}]`;
    case "resource_link":
      return `[resource link: ${oneLine(block.name)} ${oneLine(block.uri)}]`;
    case "resource":
      return "text" in block.resource
        ? `[resource ${oneLine(block.resource.uri)}]\n${block.resource.text}`
        : `[resource ${oneLine(block.resource.uri)}: ${block.resource.mimeType ?? "application/octet-stream"}, ${block.resource.bytes} bytes, sha256:${block.resource.sha256}]`;
    default:
      return JSON.stringify(block);
  }
}

/** Whether every scalar of `value` occurs in `text`, so that repeating `value` would add nothing. */
function saysAll(text: string, value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.every((item) => saysAll(text, item));
  if (typeof value === "object") {
    try {
      if (text.includes(JSON.stringify(value))) return true;
    } catch {
      return false;
    }
    return Object.values(value).every((item) => saysAll(text, item));
  }
  return text.includes(String(value));
}
