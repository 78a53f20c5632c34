/**
 * Envelope checks: turns a raw MCP tool result into the normalized `McpToolResult`,
 * enforcing identity, the HTTPS host allowlist on every record, citation and candidate URL, no
 * `javascript:`/`data:`/`vbscript:` link anywhere in free-form `data`, manifest
 * licence and attribution, downgrading a server's own full-text claims (only `paper_extract_pdf` makes
 * full text), and neutralizing prompt-like tags in every string.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { ArtifactCandidate, CrossReference, McpRecord, McpToolResult } from "../../contract/index.js";
import { CandidateSchema, ENVELOPE_KEYS, EnvelopeSchema, RecordSchema } from "../../contract/index.js";
import { GovernanceError } from "../../core/index.js";
import { governContentBlocks } from "./content-blocks.js";
import { mapJsonStrings, neutralizeDeep, neutralizePromptTags } from "./prompt-neutralizer.js";
import { type AllowedUrls, DISARMED_LINK, isDangerousLink, originOf, urlProblem } from "./url-problem.js";

/** What the broker knows about the call, from the manifest and the clock, independent of the server. */
export interface EnvelopeContext {
  sourceId: string;
  toolId: string;
  /** The manifest's `governance.networkHosts`: the only hosts URLs in a result may point to. */
  networkHosts: readonly string[];
  /**
   * Exact origins (`http://127.0.0.1:8100`) that record and citation URLs may also use, http included:
   * the configured origin of a private source such as the LLM Wiki, whose citations are built from it.
   * Every other URL keeps the HTTPS host-allowlist rule. @default none
   */
  allowedOrigins?: readonly string[];
  license: string;
  attribution: string;
  /** Overrides a `sourceVersion` the server reports. */
  sourceVersion?: string;
  now: Date;
}

/** One validation problem, with its JSON path inside the result. */
interface Issue {
  path: string;
  message: string;
}

/**
 * Normalizes a successful tool result. Structured results (an object with a `records` array, in
 * `structuredContent` or as JSON in a text block) are validated and checked; anything else (a
 * third-party server) is wrapped as `data` with no records.
 * @param callResult the tool result as the MCP client returned it (already within the size cap)
 * @param ctx identity, allowed hosts, licence and attribution from the manifest, and the time
 * @returns the normalized result: `untrusted: true`, identity/licence from `ctx`, every string neutralized
 * @throws {GovernanceError} `NORMALIZATION_FAILED` for a forged `sourceId`/`toolId`, an invalid envelope,
 *   or when no record or candidate of a non-empty result is valid (`data.issues` lists paths)
 */
export function normalizeToolResult(callResult: CallToolResult, ctx: EnvelopeContext): McpToolResult {
  const structured = findStructuredResult(callResult);
  const out: McpToolResult = {
    records: [],
    warnings: [],
    attribution: ctx.attribution,
    license: ctx.license,
    retrievedAt: ctx.now.toISOString(),
    sourceId: ctx.sourceId,
    toolId: ctx.toolId,
    untrusted: true,
  };
  if (structured === undefined) {
    const wrapped = wrapThirdParty(callResult);
    out.data = wrapped.data;
    out.warnings.push(...wrapped.warnings);
  } else {
    checkIdentity(structured, ctx);
    Object.assign(out, checkStructured(structured, ctx));
  }
  if (ctx.sourceVersion !== undefined) out.sourceVersion = ctx.sourceVersion;
  // Free-form data is copied once: script links disarmed and every string neutralized in one walk.
  let replaced = 0;
  const dataText = (text: string): string => {
    if (!isDangerousLink(text)) return neutralizePromptTags(text);
    replaced++;
    return DISARMED_LINK;
  };
  const clean: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(out)) {
    clean[key] = key === "data" ? mapJsonStrings(value, dataText) : neutralizeDeep(value);
  }
  const result = clean as unknown as McpToolResult;
  if (replaced > 0) {
    result.warnings.push(
      `Replaced ${replaced} link(s) with a javascript:, data: or vbscript: scheme in data.`,
    );
  }
  return result;
}

type CheckedParts = Pick<McpToolResult, "records" | "warnings" | "artifacts" | "data" | "sourceVersion">;

function checkStructured(raw: Record<string, unknown>, ctx: EnvelopeContext): CheckedParts {
  const envelope = EnvelopeSchema.safeParse(raw);
  if (!envelope.success) {
    throw normalizationFailed(
      "The result does not have the McpToolResult shape.",
      envelope.error.issues.map(toIssue("")),
    );
  }
  const hosts = new Set(ctx.networkHosts.map((host) => host.trim().toLowerCase()));
  // Records and citations may also use the private origins; artifact candidates never do (HTTPS only).
  const recordHosts: AllowedUrls = Object.assign(new Set(hosts), {
    origins: new Set((ctx.allowedOrigins ?? []).map(originOf).filter((o) => o !== undefined)),
  });
  const warnings = [...envelope.data.warnings];
  const invalid: Issue[] = [];
  const records: McpRecord[] = [];
  envelope.data.records.forEach((item, index) => {
    const parsed = RecordSchema.safeParse(item);
    if (!parsed.success) {
      invalid.push(...parsed.error.issues.map(toIssue(`records.${index}`)));
      warnings.push(`Dropped record ${itemName(item, "identifier", index)}: it is not a valid record.`);
      return;
    }
    const record = parsed.data;
    const problem = recordProblem(record, ctx.sourceId, recordHosts);
    if (problem) {
      warnings.push(`Dropped record ${record.identifier}: ${problem}.`);
      return;
    }
    records.push(withoutClaimedFullText(checkCrossReferences(record, recordHosts)));
  });
  const artifacts: ArtifactCandidate[] = [];
  envelope.data.artifacts?.forEach((item, index) => {
    const parsed = CandidateSchema.safeParse(item);
    if (!parsed.success) {
      invalid.push(...parsed.error.issues.map(toIssue(`artifacts.${index}`)));
      warnings.push(
        `Dropped candidate ${itemName(item, "candidateId", index)}: it is not a valid candidate.`,
      );
      return;
    }
    const candidate = parsed.data;
    const problem =
      candidate.sourceId === ctx.sourceId
        ? urlProblem("url", candidate.url, hosts)
        : `its sourceId "${candidate.sourceId}" is not "${ctx.sourceId}"`;
    if (problem) warnings.push(`Dropped candidate ${candidate.candidateId}: ${problem}.`);
    else artifacts.push(candidate);
  });
  const itemCount = envelope.data.records.length + (envelope.data.artifacts?.length ?? 0);
  if (itemCount > 0 && invalid.length > 0 && records.length + artifacts.length === 0) {
    throw normalizationFailed("No record or candidate of the result is valid.", invalid);
  }

  const parts: CheckedParts = { records, warnings };
  if (envelope.data.artifacts !== undefined) parts.artifacts = artifacts;
  const extras = Object.entries(envelope.data).filter(([key]) => !ENVELOPE_KEYS.has(key));
  if (envelope.data.data !== undefined || extras.length > 0) {
    parts.data = { ...Object.fromEntries(extras), ...envelope.data.data };
  }
  if (envelope.data.sourceVersion !== undefined) parts.sourceVersion = envelope.data.sourceVersion;
  return parts;
}

function checkIdentity(raw: Record<string, unknown>, ctx: EnvelopeContext): void {
  for (const [field, expected] of [
    ["sourceId", ctx.sourceId],
    ["toolId", ctx.toolId],
  ] as const) {
    const claimed = raw[field];
    if (claimed !== undefined && claimed !== expected) {
      throw new GovernanceError(
        "NORMALIZATION_FAILED",
        `Forged identity: the result claims ${field} ${JSON.stringify(claimed)} but came from ${JSON.stringify(expected)}.`,
        { data: { field, expected, claimed: String(claimed) } },
      );
    }
  }
}

/** Why a record must be dropped, or undefined when it is acceptable. */
function recordProblem(record: McpRecord, sourceId: string, hosts: AllowedUrls): string | undefined {
  if (record.source !== sourceId) return `its source "${record.source}" is not "${sourceId}"`;
  const urlChecks: [string, string][] = [
    ["url", record.url],
    ["primaryCitation url", record.primaryCitation.url],
    ...record.citations.map((citation, index): [string, string] => [`citation ${index} url`, citation.url]),
  ];
  for (const [what, url] of urlChecks) {
    const problem = urlProblem(what, url, hosts);
    if (problem) return problem;
  }
  return undefined;
}

/** Removes bad cross-reference URLs (the identifier stays useful) and notes it on the record. */
function checkCrossReferences(record: McpRecord, hosts: AllowedUrls): McpRecord {
  const warnings = [...record.warnings];
  const crossReferences = record.crossReferences.map((reference): CrossReference => {
    if (reference.url === undefined) return reference;
    const problem = urlProblem("url", reference.url, hosts);
    if (!problem) return reference;
    warnings.push(`Removed the URL of cross-reference ${reference.identifier}: ${problem}.`);
    return { identifier: reference.identifier, identifierType: reference.identifierType };
  });
  return { ...record, crossReferences, warnings };
}

/**
 * Downgrades a server's own full-text claim: only a governed, successful
 * `paper_extract_pdf` makes a record full text, never what an MCP server says about itself. Other
 * scopes (`curated-record`, ...) are not full-text claims and stay; only the flag is cleared.
 */
function withoutClaimedFullText(record: McpRecord): McpRecord {
  if (record.contentScope !== "full-text" && !record.fullTextRetrieved) return record;
  const contentScope =
    record.contentScope === "full-text" ? (record.abstract ? "abstract" : "metadata") : record.contentScope;
  const warning =
    `The source marked this record as full text; full text counts only after paper_extract_pdf succeeded ` +
    `on a downloaded copy, so it is kept as "${contentScope}" with fullTextRetrieved false.`;
  return { ...record, contentScope, fullTextRetrieved: false, warnings: [...record.warnings, warning] };
}

function itemName(item: unknown, key: string, index: number): string {
  const value =
    typeof item === "object" && item !== null ? (item as Record<string, unknown>)[key] : undefined;
  return typeof value === "string" && value !== "" ? value : `#${index}`;
}

function toIssue(prefix: string): (issue: z.core.$ZodIssue) => Issue {
  return (issue) => ({
    path: [prefix, ...issue.path.map(String)].filter((part) => part !== "").join("."),
    message: issue.message,
  });
}

function normalizationFailed(message: string, issues: Issue[]): GovernanceError {
  return new GovernanceError("NORMALIZATION_FAILED", message, { data: { issues } });
}

/**
 * The structured result a tool returned: an object with a `records` array, in `structuredContent` or
 * as JSON in a text block.
 * @param result the tool result as the MCP client returned it
 * @returns the object, still unvalidated, or undefined for a third-party result (plain text, no records)
 */
export function findStructuredResult(result: CallToolResult): Record<string, unknown> | undefined {
  if (hasRecordsArray(result.structuredContent)) return result.structuredContent;
  for (const block of result.content) {
    if (block.type !== "text" || !block.text.trimStart().startsWith("{")) continue;
    try {
      const parsed: unknown = JSON.parse(block.text);
      if (hasRecordsArray(parsed)) return parsed;
    } catch {
      // Not JSON: plain text from a third-party server.
    }
  }
  return undefined;
}

function hasRecordsArray(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Array.isArray((value as { records?: unknown }).records)
  );
}

/**
 * Third-party content as data: each content block governed for what it is (`governContentBlocks`).
 * @param result a tool result without a structured envelope
 * @returns `{content}` of governed blocks, plus the result's `structuredContent` when it has one, and a
 *   warning per block that could not be kept
 */
export function wrapThirdParty(result: CallToolResult): {
  data: Record<string, unknown>;
  warnings: string[];
} {
  const { content, warnings } = governContentBlocks(result);
  const data: Record<string, unknown> = { content };
  if (result.structuredContent !== undefined) data.structuredContent = result.structuredContent;
  return { data, warnings };
}
