import { type Claim, type Evidence, type EvidenceRuntime, reviewEvidence } from "sciencegate/artifacts";
import type { McpRecord } from "sciencegate/governance";
/**
 * The demo's evidence check of a final answer. Each fact (a line, or a sentence of a longer line)
 * must carry a citation label; each label is traced to the successful governed invocation of the
 * session that returned a record with that label (read back from the CAS), and the facts are then
 * reviewed by the library's `reviewEvidence` (ledger row, intact CAS copies, record and URL really
 * returned, full text only after a successful extraction).
 */

/** One label of a fact and the invocation that returned it (absent when none did). */
export interface CheckedCitation {
  label: string;
  invocationId?: string;
  sourceId?: string;
  toolId?: string;
}

/** One fact of the answer. */
export interface CheckedFact {
  text: string;
  /** The fact says it rests on full text. */
  fullText: boolean;
  citations: CheckedCitation[];
  /** Why the fact is not backed; empty when it is. */
  problems: string[];
  /** The `paper_extract_pdf` ledger row that backs a full-text fact. */
  extractionInvocationId?: string;
}

/** The verdict over a whole answer. */
export interface CitationReport {
  ok: boolean;
  facts: CheckedFact[];
}

/** Options of {@link checkCitations}. */
export interface CheckCitationsOptions {
  /** Only invocations of this session count. @default every session */
  sessionId?: string;
}

interface LabelSource {
  evidence: Evidence;
  sourceId: string;
  toolId: string;
}

const LABEL = /\[([A-Za-z][\w.-]*:[^\]\s]+)\](?:\((https?:\/\/[^)\s]+)\))?/g;
const FULL_TEXT = /full[- ]?text/i;

/**
 * Checks each fact of an answer.
 * @param runtime the ledger and the CAS (a `Governance` fits)
 * @param answer the model's final text
 * @param options the session whose invocations count
 * @returns one entry per fact, and `ok` when the answer has facts and every one is backed
 * @throws GovernanceError `UPSTREAM_UNAVAILABLE` when the ledger is closed
 */
export async function checkCitations(
  runtime: EvidenceRuntime,
  answer: string,
  options: CheckCitationsOptions = {},
): Promise<CitationReport> {
  const labels = await labelSources(runtime, options.sessionId);
  const claims: Array<Claim & { id: string }> = [];
  const pending = new Map<string, CheckedFact>();
  const facts = splitFacts(answer).map((text, i): CheckedFact => {
    const fact: CheckedFact = { text, fullText: FULL_TEXT.test(text), citations: [], problems: [] };
    const evidence: Evidence[] = [];
    for (const [, label = "", url] of text.matchAll(LABEL)) {
      const source = labels.get(label);
      if (!source) {
        fact.citations.push({ label });
        fact.problems.push(`${label} was returned by no governed invocation of this session`);
        continue;
      }
      const { mcpInvocationId } = source.evidence;
      fact.citations.push({
        label,
        invocationId: mcpInvocationId,
        sourceId: source.sourceId,
        toolId: source.toolId,
      });
      // A URL the answer gives must be one that invocation returned; reviewEvidence checks it.
      evidence.push({ ...source.evidence, ...(url ? { url } : {}) });
    }
    if (fact.citations.length === 0) fact.problems.push("no citation");
    if (evidence.length > 0) {
      const id = `fact-${i + 1}`;
      claims.push({ id, text, fullText: fact.fullText, evidence });
      pending.set(id, fact);
    }
    return fact;
  });
  const review = await reviewEvidence(
    runtime,
    claims,
    options.sessionId ? { sessionId: options.sessionId } : {},
  );
  for (const claim of review.claims) {
    const fact = pending.get(claim.id);
    if (!fact) continue;
    for (const item of claim.evidence) {
      if (!item.accepted) fact.problems.push(`${item.reason ?? "refused"}: ${item.message ?? ""}`);
      else if (claim.fullText && item.extraction) fact.extractionInvocationId = item.extraction.invocationId;
    }
  }
  return { ok: facts.length > 0 && facts.every((fact) => fact.problems.length === 0), facts };
}

/** Every citation label of every record a successful invocation returned; the first invocation wins. */
async function labelSources(runtime: EvidenceRuntime, sessionId?: string): Promise<Map<string, LabelSource>> {
  const byLabel = new Map<string, LabelSource>();
  const rows = await runtime.ledger.query({ status: "ok", ...(sessionId ? { sessionId } : {}) });
  for (const row of rows) {
    if (!row.normalizedRef) continue;
    const result = (await readJson(runtime, row.normalizedRef)) as { records?: McpRecord[] } | undefined;
    for (const record of Array.isArray(result?.records) ? result.records : []) {
      for (const citation of [record.primaryCitation, ...(record.citations ?? [])]) {
        const label = /^\[([^\]]+)\]/.exec(citation?.label ?? "")?.[1];
        if (!label || byLabel.has(label)) continue;
        byLabel.set(label, {
          evidence: { mcpInvocationId: row.invocationId, recordId: record.identifier },
          sourceId: row.sourceId,
          toolId: row.toolId,
        });
      }
    }
  }
  return byLabel;
}

/** Lines without list markers; a long line splits into sentences. Headings and lead-ins are not facts. */
function splitFacts(answer: string): string[] {
  return answer
    .split("\n")
    .map((line) => line.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, "").trim())
    .filter((line) => line !== "" && !line.startsWith("#") && !line.endsWith(":"))
    .flatMap((line) => line.split(/(?<=[.!?])\s+(?=[A-Z"“])/))
    .filter((fact) => fact.trim() !== "");
}

async function readJson(runtime: EvidenceRuntime, ref: string): Promise<unknown> {
  try {
    return JSON.parse(new TextDecoder().decode(await runtime.store.get(ref)));
  } catch {
    return undefined;
  }
}
