/**
 * `reviewEvidence({ governance, claims })`: accepts a claim only when every piece of its evidence is a successful,
 * governed invocation of the ledger whose intact CAS copy returned the cited record and URL, and a
 * full-text claim only when that record's PDF was really extracted.
 */

import type { Citation, ContentScope, McpRecord } from "../contract/index.js";
import { requireGovernanceOption } from "../core/index.js";
import type { InvocationRecord } from "../governance/audit/index.js";
import { type Claim, type Evidence, parseClaims } from "./evidence-claims.js";
import {
  type EvidenceRuntime,
  type ExtractionIndex,
  extractionsOfRecord,
  type FullTextExtraction,
  loadExtractionIndex,
  readJson,
  verifiesInStore,
} from "./full-text-extractions.js";
import { citedRecordKeys, recordUrlKeys, urlKey, workIdentifierKey } from "./identifier-match.js";

/** Why a piece of evidence was refused. */
export type EvidenceRejection =
  /** The invocation is not in the ledger (or belongs to another session than the reviewed one). */
  | "not_governed"
  /** The invocation's row records an error. */
  | "invocation_failed"
  /** A CAS copy of the row is missing or no longer hashes to its address. */
  | "cas_corrupt"
  /** The invocation returned no record with the cited identifier. */
  | "record_not_returned"
  /** The cited URL is not the record's URL nor one of its citation URLs. */
  | "url_not_returned"
  /** A full-text claim (or a cited `artifactJobId`) without a successful `paper_extract_pdf`. */
  | "full_text_not_extracted"
  /** The cited `artifactJobId` was extracted, but for another paper than the cited record. */
  | "artifact_job_mismatch";

/** The cited record as the review saw it. */
export interface ReviewedRecord {
  identifier: string;
  title: string;
  /** `full-text` exactly when a matching extraction backs it; else the scope the invocation stored. */
  contentScope: ContentScope;
  fullTextRetrieved: boolean;
  citation: Citation;
}

/** One piece of evidence with its verdict. */
export interface ReviewedEvidence extends Evidence {
  accepted: boolean;
  reason?: EvidenceRejection;
  /** What was wrong and how to fix it. */
  message?: string;
  record?: ReviewedRecord;
  /** The extraction that makes the record full text. */
  extraction?: Pick<FullTextExtraction, "invocationId" | "artifactJobId" | "extractionJobId" | "textPath">;
}

/** One claim with its verdict: accepted when every piece of its evidence is. */
export interface ReviewedClaim {
  id: string;
  text: string;
  fullText: boolean;
  accepted: boolean;
  evidence: ReviewedEvidence[];
}

/** The verdict over all claims. */
export interface EvidenceReview {
  /** Every claim is accepted. */
  accepted: boolean;
  claims: ReviewedClaim[];
}

/** Options of `reviewEvidence`. */
export interface ReviewEvidenceOptions {
  /** The ledger and the CAS (a `Governance` fits). */
  governance: EvidenceRuntime;
  /** The claims with their evidence. */
  claims: Claim[];
  /** Accept only invocations of this session (a LangGraph thread id). @default any session */
  sessionId?: string;
}

/** What one cited invocation offers: either a refusal, or its row and stored records. */
type InvocationCheck =
  | { rejection: Rejection }
  | { row: InvocationRecord; records: McpRecord[]; rejection?: undefined };
interface Rejection {
  reason: EvidenceRejection;
  message: string;
}

/**
 * Reviews claims against the governed ledger. Evidence is accepted only when its invocation is an
 * `ok` ledger row (MCP servers and local function tools alike), every CAS copy of the row verifies,
 * the cited record is one that invocation returned (`recordId` against the record's and its
 * citations' identifiers), and the cited URL is that record's `url` or a citation URL. A claim with
 * `fullText: true` also needs, for at least one accepted evidence record, a successful
 * `paper_extract_pdf` of the same source and work; an `artifactJobId` must be that extraction's job.
 * @param options the runtime (`governance`), the `claims` with their evidence, and the session restriction
 * @returns one verdict per claim and evidence, with reason codes and fix-it messages
 * @throws GovernanceError `INVALID_INPUT` for malformed claims (`data.issues` names each path);
 *   `UPSTREAM_UNAVAILABLE` when the ledger is closed
 * @example
 * const review = await reviewEvidence({
 *   governance,
 *   claims: [{ text: "X binds Y", evidence: [{ mcpInvocationId: outcome.invocationId, recordId: "22663011" }] }],
 * });
 */
export async function reviewEvidence(options: ReviewEvidenceOptions): Promise<EvidenceReview> {
  requireGovernanceOption(options, "reviewEvidence");
  const { governance: runtime, claims } = options;
  const parsed = parseClaims(claims);
  const invocations = new Map<string, Promise<InvocationCheck>>();
  const checkOnce = (id: string) => {
    let check = invocations.get(id);
    if (check === undefined) {
      check = checkInvocation(runtime, id, options.sessionId);
      invocations.set(id, check);
    }
    return check;
  };
  let index: Promise<ExtractionIndex> | undefined;
  const extractionIndex = () => {
    index ??= loadExtractionIndex(runtime);
    return index;
  };
  const reviewed: ReviewedClaim[] = [];
  for (const claim of parsed) {
    const evidence: ReviewedEvidence[] = [];
    for (const item of claim.evidence) {
      evidence.push(await reviewOne(item, await checkOnce(item.mcpInvocationId), extractionIndex));
    }
    const fullText = claim.fullText === true;
    if (fullText && !evidence.some((item) => item.accepted && item.extraction)) {
      const corrupt = (await extractionIndex()).corrupt.length;
      for (const item of evidence) if (item.accepted) rejectForFullText(item, corrupt);
    }
    const accepted = evidence.every((item) => item.accepted);
    reviewed.push({ id: claim.id, text: claim.text, fullText, accepted, evidence });
  }
  return { accepted: reviewed.every((claim) => claim.accepted), claims: reviewed };
}

async function checkInvocation(
  runtime: EvidenceRuntime,
  id: string,
  sessionId: string | undefined,
): Promise<InvocationCheck> {
  const row = await runtime.ledger.get(id);
  const fix = "cite the invocationId that a governed tool call returned with the evidence";
  if (row === undefined) {
    return reject("not_governed", `Invocation "${id}" is not in the governed ledger; ${fix}.`);
  }
  if (sessionId !== undefined && row.sessionId !== sessionId) {
    return reject(
      "not_governed",
      `Invocation "${id}" belongs to session "${row.sessionId}", not the reviewed session "${sessionId}"; ${fix} in this session.`,
    );
  }
  const call = `${row.sourceId}/${row.toolId}`;
  if (row.status !== "ok") {
    return reject(
      "invocation_failed",
      `Invocation "${id}" (${call}) failed with ${row.error?.code ?? "an error"}: ${row.error?.message ?? ""} ` +
        "A failed call is no evidence; repeat the call and cite the new invocationId.",
    );
  }
  const refs: [string, string | undefined][] = [
    ["request", row.requestRef],
    ["raw response", row.rawRef],
    ["normalized result", row.normalizedRef],
  ];
  for (const [what, ref] of refs) {
    if (ref !== undefined && !(await verifiesInStore(runtime.store, ref))) {
      return reject(
        "cas_corrupt",
        `The stored ${what} of invocation "${id}" (${call}, ${ref}) is missing or no longer matches its ` +
          "SHA-256, so the evidence cannot be trusted; repeat the call and cite the new invocationId.",
      );
    }
  }
  const result =
    row.normalizedRef === undefined ? undefined : await readJson(runtime.store, row.normalizedRef);
  const records = (result as { records?: unknown } | undefined)?.records;
  return { row, records: Array.isArray(records) ? records.filter(isRecordShape) : [] };
}

async function reviewOne(
  evidence: Evidence,
  check: InvocationCheck,
  extractionIndex: () => Promise<ExtractionIndex>,
): Promise<ReviewedEvidence> {
  if (check.rejection) return refused(evidence, check.rejection);
  const { row, records } = check;
  const call = `invocation "${row.invocationId}" (${row.sourceId}/${row.toolId})`;
  let record: McpRecord | undefined;
  if (evidence.recordId !== undefined) {
    const key = workIdentifierKey(evidence.recordId);
    record = records.find((candidate) => citedRecordKeys(candidate).has(key));
    if (record === undefined) {
      return refused(evidence, {
        reason: "record_not_returned",
        message:
          `${capitalize(call)} returned no record "${evidence.recordId}" (it returned ${listIds(records)}); ` +
          "cite a record that call returned, or the invocation that returned this record.",
      });
    }
  }
  if (evidence.url !== undefined) {
    const key = urlKey(evidence.url);
    record ??= records.find((candidate) => recordUrlKeys(candidate).has(key));
    if (record === undefined || !recordUrlKeys(record).has(key)) {
      const offered = record
        ? new Set([record.url, record.primaryCitation.url, ...record.citations.map((c) => c.url)])
        : [];
      return refused(evidence, {
        reason: "url_not_returned",
        message:
          `The URL ${evidence.url} is not one that ${call} returned` +
          (record
            ? ` for record "${record.identifier}"; cite one of ${[...offered].join(", ")}.`
            : "; cite a record URL it returned."),
      });
    }
  }
  // Only a record or a cited job can be backed by an extraction; skip the ledger scan otherwise.
  const { extractions } =
    record !== undefined || evidence.artifactJobId !== undefined
      ? await extractionIndex()
      : { extractions: [] };
  let extraction: FullTextExtraction | undefined;
  if (evidence.artifactJobId !== undefined) {
    const job = evidence.artifactJobId;
    const ofJob = extractions.filter((entry) => entry.artifactJobId === job);
    if (ofJob.length === 0) {
      return refused(evidence, {
        reason: "full_text_not_extracted",
        message:
          `No successful paper_extract_pdf of artifact job "${job}" is in the ledger; run paper_extract_pdf ` +
          `{artifactJobId: "${job}"} in a turn after the download completed, then cite it again.`,
      });
    }
    record ??= records.find((candidate) => extractionsOfRecord(ofJob, candidate).length > 0);
    extraction = record === undefined ? undefined : extractionsOfRecord(ofJob, record).at(-1);
    if (extraction === undefined) {
      const paper = ofJob[0] ? `${ofJob[0].sourceId} record "${ofJob[0].sourceRecordId}"` : "another paper";
      return refused(evidence, {
        reason: "artifact_job_mismatch",
        message:
          `Artifact job "${job}" extracted ${paper}, not ` +
          (record ? `record "${record.identifier}" of ${call}` : `a record of ${call}`) +
          "; cite the job that downloaded this record's paper.",
      });
    }
  } else if (record !== undefined) {
    extraction = extractionsOfRecord(extractions, record).at(-1);
  }
  const out: ReviewedEvidence = { ...evidence, accepted: true };
  if (record) out.record = reviewedRecord(record, extraction !== undefined);
  if (extraction) {
    const { invocationId, artifactJobId, extractionJobId, textPath } = extraction;
    out.extraction = { invocationId, artifactJobId, extractionJobId, textPath };
  }
  return out;
}

function rejectForFullText(item: ReviewedEvidence, corruptExtractions: number): void {
  item.accepted = false;
  item.reason = "full_text_not_extracted";
  const ignored =
    corruptExtractions > 0
      ? ` (${corruptExtractions} extraction row(s) were ignored because their CAS entry fails its hash check)`
      : "";
  item.message = item.record
    ? `The claim needs full text, but no successful paper_extract_pdf of record "${item.record.identifier}" ` +
      `is in the ledger${ignored}; the record holds only its "${item.record.contentScope}" scope. Download a ` +
      "candidate of it with artifact_download, run paper_extract_pdf on the completed job in a later turn, " +
      "then cite the record again, or drop fullText."
    : "The claim needs full text, but this evidence cites no record; add the recordId of the paper whose " +
      `PDF was extracted with paper_extract_pdf${ignored}.`;
}

function reviewedRecord(record: McpRecord, extracted: boolean): ReviewedRecord {
  return {
    identifier: record.identifier,
    title: record.title,
    contentScope: extracted ? "full-text" : record.contentScope,
    fullTextRetrieved: extracted ? true : record.fullTextRetrieved,
    citation: record.primaryCitation,
  };
}

function refused(evidence: Evidence, rejection: Rejection): ReviewedEvidence {
  return { ...evidence, accepted: false, reason: rejection.reason, message: rejection.message };
}

function reject(reason: EvidenceRejection, message: string): InvocationCheck {
  return { rejection: { reason, message } };
}

// Rows the broker wrote passed the envelope's schema; this guards against rows other code appended.
function isRecordShape(value: unknown): value is McpRecord {
  const record = value as Partial<McpRecord> | null;
  return (
    typeof record === "object" &&
    record !== null &&
    typeof record.identifier === "string" &&
    typeof record.url === "string" &&
    typeof record.primaryCitation?.url === "string" &&
    Array.isArray(record.citations) &&
    Array.isArray(record.crossReferences)
  );
}

function listIds(records: readonly McpRecord[]): string {
  if (records.length === 0) return "no records";
  const shown = records.slice(0, 5).map((record) => `"${record.identifier}"`);
  return records.length > 5 ? `${shown.join(", ")} and ${records.length - 5} more` : shown.join(", ");
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
