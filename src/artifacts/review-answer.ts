/**
 * `reviewAnswer({ governance, answer })`: the evidence check of a model's final text. The answer is split into
 * facts (a line, or a sentence of a longer line); each citation label of a fact (`[PMID:22663011]`,
 * optionally linked) is traced to the successful governed invocation that returned a record with that
 * label, and the facts are then judged by `reviewEvidence` (ledger row, intact CAS copies, record and
 * URL really returned, full text only after a successful extraction).
 */
import type { McpRecord } from "../contract/index.js";
import { isGovernanceError, requireGovernanceOption } from "../core/index.js";
import type { Claim, Evidence } from "./evidence-claims.js";
import { type EvidenceRuntime, readJson } from "./full-text-extractions.js";
import { type ReviewedEvidence, reviewEvidence } from "./review-evidence.js";

/** Options of `reviewAnswer`. */
export interface ReviewAnswerOptions {
  /** The ledger and the CAS (a `Governance` fits). */
  governance: EvidenceRuntime;
  /** The model's final text. */
  answer: string;
  /** Only invocations of this session count (a LangGraph thread id). @default every session */
  sessionId?: string | undefined;
  /** Facts reviewed at most; later facts are left out and counted in `omittedFacts`. @default 200 */
  maxFacts?: number | undefined;
  /** Citation labels reviewed at most over the whole answer; later ones count in `omittedCitations`. @default 500 */
  maxCitations?: number | undefined;
  /**
   * Successful invocations searched for the labels: the latest this many (of the session). An older
   * invocation's records are not found. @default 2000
   */
  maxInvocations?: number | undefined;
}

/** One citation label of a fact and what it was traced to. */
export interface AnswerCitation {
  /** The label without brackets, e.g. `PMID:22663011`. */
  label: string;
  /** The link the answer gave the label, when it gave one. */
  url?: string;
  /** The invocation that returned a record with this label; absent when none did. */
  invocationId?: string;
  sourceId?: string;
  toolId?: string;
  /** The evidence built from the label and `reviewEvidence`'s verdict on it; absent when no invocation returned it. */
  evidence?: ReviewedEvidence;
}

/** One fact of the answer with its verdict. */
export interface AnswerFact {
  /** `fact-<n>`, 1-based in the answer. */
  id: string;
  text: string;
  /** The fact says it rests on full text (it mentions "full text"): it then needs an extraction. */
  fullText: boolean;
  citations: AnswerCitation[];
  /** Cited, every label traced to an invocation, and every piece of evidence accepted. */
  accepted: boolean;
  /** Why the fact is not backed, with how to fix it; empty when it is. */
  problems: string[];
  /** Labels of this fact past `maxCitations`, not reviewed (the fact is then not accepted). */
  omittedCitations: number;
  /** The `paper_extract_pdf` ledger row that backs a full-text fact. */
  extractionInvocationId?: string;
}

/** The verdict over a whole answer. */
export interface AnswerReview {
  /** The answer has facts and every reviewed one is backed (and none was left out). */
  accepted: boolean;
  facts: AnswerFact[];
  /** Facts past `maxFacts` (or after `maxCitations` was reached), not reviewed. */
  omittedFacts: number;
  /** Labels past `maxCitations`, not reviewed. */
  omittedCitations: number;
  /** Successful invocations whose records were searched for the labels. */
  searchedInvocations: number;
  /** The search stopped at `maxInvocations`: older invocations were not searched. */
  searchLimited: boolean;
}

interface LabelSource {
  evidence: Evidence;
  sourceId: string;
  toolId: string;
}

// A bracketed text, optionally linked: `[PMID:22663011](https://…)`, `[CHEMBL941]`. Bounded repetitions
// that stop at the next bracket keep the scan linear on hostile input (a megabyte of `[a:[a:[a:` or
// `[a:1]([a:1](` without spaces): each `[` starts one short scan.
const BRACKETED = /\[([^[\]\n]{1,200})\](?:\(([^[\]\s)]{1,2048})\))?/g;
// The shape of a source label (`PMID:22663011`, `arXiv:2403.01234v2`): a citation even when no
// invocation returned it.
const LABEL_SHAPE = /^[A-Za-z][\w.-]{0,40}:\S+$/;
const FULL_TEXT = /full[- ]?text/i;

interface Bracketed {
  label: string;
  url?: string;
}

/**
 * Reviews the facts of an answer with citation labels. A citation is a bracketed label that a searched
 * invocation returned (`[CHEMBL941]`), has a source label's `prefix:id` shape (`[PMID:22663011]`), or
 * carries a link (`[text](url)`); other bracketed text (`[sic]`) is prose.
 * @param options the runtime (`governance`), the `answer`, the session whose invocations count, and
 *   the review's bounds
 * @returns one verdict per fact; `accepted` when the answer has facts and every one is backed
 * @throws GovernanceError `UPSTREAM_UNAVAILABLE` when the ledger is closed
 * @example
 * const review = await reviewAnswer({ governance, answer: "Base editing works [PMID:22663011].", sessionId: threadId });
 * for (const fact of review.facts) if (!fact.accepted) console.log(fact.text, fact.problems);
 */
export async function reviewAnswer(options: ReviewAnswerOptions): Promise<AnswerReview> {
  requireGovernanceOption(options, "reviewAnswer");
  const { governance: runtime, answer } = options;
  const maxFacts = options.maxFacts ?? 200;
  const maxCitations = options.maxCitations ?? 500;
  const all = splitFacts(answer);
  const bracketed = all.slice(0, maxFacts).map((text) => [...text.matchAll(BRACKETED)].map(toBracketed));
  // Bounded too: a label past this many distinct ones is a citation only by its shape or link.
  const wanted = new Set<string>();
  for (const item of bracketed.flat()) if (wanted.size < maxCitations * 4) wanted.add(item.label);
  const search = await labelSources(runtime, wanted, options);
  const isCitation = ({ label, url }: Bracketed) =>
    url !== undefined || search.byLabel.has(label) || LABEL_SHAPE.test(label);

  const facts: AnswerFact[] = [];
  const labelsOf = new Map<AnswerFact, Bracketed[]>();
  let labels = 0;
  let omittedCitations = 0;
  for (const [i, text] of all.entries()) {
    if (facts.length >= maxFacts || labels >= maxCitations) {
      omittedCitations += [...text.matchAll(BRACKETED)].map(toBracketed).filter(isCitation).length;
      continue;
    }
    const found = (bracketed[i] ?? []).filter(isCitation);
    const kept = found.slice(0, maxCitations - labels);
    labels += kept.length;
    const fact: AnswerFact = {
      id: `fact-${i + 1}`,
      text,
      fullText: FULL_TEXT.test(text),
      citations: [],
      accepted: false,
      problems: [],
      omittedCitations: found.length - kept.length,
    };
    if (kept.length < found.length) {
      omittedCitations += found.length - kept.length;
      fact.problems.push(
        `${found.length - kept.length} citation(s) past the review's limit were not checked`,
      );
    }
    facts.push(fact);
    labelsOf.set(fact, kept);
  }
  const omittedFacts = all.length - facts.length;

  const claims: (Claim & { id: string })[] = [];
  const resolved = new Map<AnswerFact, AnswerCitation[]>();
  for (const fact of facts) {
    const evidence: Evidence[] = [];
    const traced: AnswerCitation[] = [];
    for (const { label, url } of labelsOf.get(fact) ?? []) {
      const citation: AnswerCitation = url === undefined ? { label } : { label, url };
      fact.citations.push(citation);
      const source = search.byLabel.get(label);
      if (!source) {
        fact.problems.push(
          `${label} was returned by no governed invocation${options.sessionId ? " of this session" : ""}`,
        );
        continue;
      }
      citation.invocationId = source.evidence.mcpInvocationId;
      citation.sourceId = source.sourceId;
      citation.toolId = source.toolId;
      // A URL the answer gives must be one that invocation returned; reviewEvidence checks it.
      evidence.push(url === undefined ? source.evidence : { ...source.evidence, url });
      traced.push(citation);
    }
    if (fact.citations.length === 0) fact.problems.push("no citation");
    if (evidence.length > 0) {
      claims.push({ id: fact.id, text: fact.text, fullText: fact.fullText, evidence });
      resolved.set(fact, traced);
    }
  }
  const review = await reviewEvidence({
    governance: runtime,
    claims,
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
  });
  const claimsById = new Map(review.claims.map((claim) => [claim.id, claim]));
  for (const fact of facts) {
    const claim = claimsById.get(fact.id);
    const traced = resolved.get(fact) ?? [];
    // reviewEvidence keeps the order of a claim's evidence: the n-th item is the n-th traced label's.
    for (const [n, item] of (claim?.evidence ?? []).entries()) {
      const citation = traced[n];
      if (citation) citation.evidence = item;
      if (!item.accepted) fact.problems.push(`${item.reason ?? "refused"}: ${item.message ?? ""}`);
      else if (claim?.fullText && item.extraction) fact.extractionInvocationId = item.extraction.invocationId;
    }
    fact.accepted = fact.problems.length === 0;
  }
  return {
    accepted: facts.length > 0 && omittedFacts === 0 && facts.every((fact) => fact.accepted),
    facts,
    omittedFacts,
    omittedCitations,
    searchedInvocations: search.searched,
    searchLimited: search.limited,
  };
}

/**
 * The invocation that returned each wanted label: among the latest `maxInvocations` successful rows
 * (of the session), the earliest that returned a record citing it.
 */
async function labelSources(
  runtime: EvidenceRuntime,
  wanted: ReadonlySet<string>,
  options: ReviewAnswerOptions,
): Promise<{ byLabel: Map<string, LabelSource>; searched: number; limited: boolean }> {
  const byLabel = new Map<string, LabelSource>();
  if (wanted.size === 0) return { byLabel, searched: 0, limited: false };
  const limit = options.maxInvocations ?? 2000;
  const rows = await runtime.ledger.query({
    status: "ok",
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    order: "desc",
    limit,
  });
  for (const row of rows.reverse()) {
    if (!row.normalizedRef) continue;
    const result = (await readStored(runtime, row.normalizedRef)) as { records?: McpRecord[] } | undefined;
    for (const record of Array.isArray(result?.records) ? result.records : []) {
      for (const citation of [record?.primaryCitation, ...(record?.citations ?? [])]) {
        const label = /^\[([^\]]+)\]/.exec(citation?.label ?? "")?.[1];
        if (!label || !wanted.has(label) || byLabel.has(label)) continue;
        byLabel.set(label, {
          evidence: { mcpInvocationId: row.invocationId, recordId: record.identifier },
          sourceId: row.sourceId,
          toolId: row.toolId,
        });
      }
    }
  }
  return { byLabel, searched: rows.length, limited: rows.length === limit };
}

/** A stored result parsed as JSON; `undefined` when it is missing or not JSON (reviewEvidence then says why). */
async function readStored(runtime: EvidenceRuntime, ref: string): Promise<unknown> {
  try {
    return await readJson(runtime.store, ref);
  } catch (error) {
    if (isGovernanceError(error) && error.code === "NOT_FOUND") return undefined;
    throw error;
  }
}

function toBracketed([, label = "", url]: RegExpMatchArray): Bracketed {
  return url === undefined ? { label } : { label, url };
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
