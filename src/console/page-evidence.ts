/**
 * The Evidence page: paste an answer with citation labels (or `reviewEvidence` claims as JSON), or pick
 * a thread whose final answer the app can read, and see each claim's verdict: which governed invocation
 * backs each citation, or why it is refused. Reviewing reads the ledger and the CAS only, so the form
 * is not a write (it still carries the CSRF token, like every POST).
 */
import {
  type AnswerReview,
  type Claim,
  type EvidenceReview,
  reviewAnswer,
  reviewEvidence,
} from "../artifacts/index.js";
import { isGovernanceError } from "../core/index.js";
import { html, type SafeHtml } from "./console-html.js";
import type { ConsoleContext, ConsoleResult, ConsoleRoute } from "./console-route.js";
import { badge, time } from "./console-ui.js";
import { type ClaimView, claimsOfAnswer, claimsOfReview, renderClaims } from "./evidence-view.js";
import { researchObjectForm } from "./page-research-object.js";

/** Claims (facts of an answer, or pasted JSON claims) reviewed at most per request. */
export const EVIDENCE_MAX_CLAIMS = 200;
/** Citations (labels, or JSON evidence items) reviewed at most per request. */
export const EVIDENCE_MAX_CITATIONS = 500;
/** Characters of a thread's answer reviewed at most (a pasted answer is bounded by the form's body cap). */
const MAX_ANSWER_CHARS = 1_000_000;
/** Ledger rows read to list recent sessions and threads in the form. */
const RECENT_ROWS = 1_000;
/** Sessions (and threads) offered in the form. */
const RECENT_SESSIONS = 50;

interface ReviewRun {
  claims: ClaimView[];
  notes: string[];
  accepted: boolean;
  /** The review was of pasted JSON claims, not of an answer's text (which a research object holds). */
  fromJson?: boolean;
}

/** `GET /evidence` (the form; `?thread=<id>` reviews that thread's answer) and `POST /evidence` (a review). */
export const evidenceRoutes: readonly ConsoleRoute[] = [
  {
    method: "GET",
    pattern: "/evidence",
    async handle(request, context) {
      const thread = field(request.url.searchParams.get("thread"));
      const session = field(request.url.searchParams.get("session"));
      if (thread === undefined || context.threadAnswer === undefined) {
        return page(context, { session });
      }
      const answer = await context.threadAnswer(thread);
      if (answer === undefined) {
        return page(context, {
          session,
          thread,
          error: `Thread ${thread} has no final answer in its latest checkpoint.`,
        });
      }
      const threadSession = await sessionOfThread(context, thread);
      const cut = answer.length > MAX_ANSWER_CHARS;
      const run = await review(context, cut ? answer.slice(0, MAX_ANSWER_CHARS) : answer, threadSession);
      if (cut)
        run.notes.push(
          `Only the first ${MAX_ANSWER_CHARS.toLocaleString("en")} characters of the answer were reviewed.`,
        );
      return page(context, { session: threadSession, thread, answer, run });
    },
  },
  {
    method: "POST",
    pattern: "/evidence",
    async handle(request, context) {
      const answer = request.form.get("answer") ?? "";
      const session = field(request.form.get("session_text")) ?? field(request.form.get("session"));
      if (answer.trim() === "") {
        return page(context, {
          session,
          error: "Paste an answer with citations, or claims as JSON.",
          status: 400,
        });
      }
      try {
        const run = await review(context, answer, session);
        return page(context, { session, answer, run });
      } catch (error) {
        if (!isGovernanceError(error) || error.code !== "INVALID_INPUT") throw error;
        return page(context, { session, answer, error: error.message, status: 400 });
      }
    },
  },
];

/** Reviews pasted JSON claims (a JSON array) or an answer's text, within the page's bounds. */
async function review(
  context: ConsoleContext,
  answer: string,
  sessionId: string | undefined,
): Promise<ReviewRun> {
  const claims = jsonClaims(answer);
  const scope = sessionId === undefined ? {} : { sessionId };
  if (claims !== undefined) {
    const kept: unknown[] = [];
    let items = 0;
    for (const claim of claims) {
      const count = Array.isArray((claim as { evidence?: unknown })?.evidence)
        ? (claim as { evidence: unknown[] }).evidence.length
        : 0;
      if (kept.length >= EVIDENCE_MAX_CLAIMS || items + count > EVIDENCE_MAX_CITATIONS) break;
      kept.push(claim);
      items += count;
    }
    // reviewEvidence validates each claim's shape (INVALID_INPUT naming the field).
    const result: EvidenceReview = await reviewEvidence({
      governance: context.governance,
      claims: kept as Claim[],
      ...scope,
    });
    const notes =
      kept.length < claims.length
        ? [
            `Reviewed the first ${kept.length} of ${claims.length} claims: the console reviews at most ${EVIDENCE_MAX_CLAIMS} claims and ${EVIDENCE_MAX_CITATIONS} evidence items at once.`,
          ]
        : [];
    const accepted = result.accepted && kept.length > 0 && notes.length === 0;
    return { claims: claimsOfReview(result), notes, accepted, fromJson: true };
  }
  const result: AnswerReview = await reviewAnswer({
    governance: context.governance,
    answer,
    ...scope,
    maxFacts: EVIDENCE_MAX_CLAIMS,
    maxCitations: EVIDENCE_MAX_CITATIONS,
  });
  const notes: string[] = [];
  if (result.omittedFacts > 0 || result.omittedCitations > 0) {
    notes.push(
      `Not reviewed: ${result.omittedFacts} fact(s) and ${result.omittedCitations} citation(s) past the console's limits (${EVIDENCE_MAX_CLAIMS} facts, ${EVIDENCE_MAX_CITATIONS} citations per review).`,
    );
  }
  notes.push(
    `Labels were looked up in the latest ${result.searchedInvocations.toLocaleString("en")} successful invocation(s)${sessionId === undefined ? " of every session" : " of this session"}${result.searchLimited ? " (the search limit: older invocations were not searched)" : ""}.`,
  );
  return { claims: claimsOfAnswer(result), notes, accepted: result.accepted };
}

/** The pasted text as claims when it is a JSON array, else `undefined` (an answer's text). */
function jsonClaims(answer: string): unknown[] | undefined {
  if (!answer.trimStart().startsWith("[")) return undefined;
  try {
    const value: unknown = JSON.parse(answer);
    return Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The session of a thread's invocations (the thread id itself when it has none: the default mapping). */
async function sessionOfThread(context: ConsoleContext, threadId: string): Promise<string> {
  const [row] = await context.governance.ledger.query({ threadId, order: "desc", limit: 1 });
  return row?.sessionId ?? threadId;
}

interface PageState {
  session?: string | undefined;
  thread?: string | undefined;
  answer?: string;
  run?: ReviewRun;
  error?: string;
  status?: number;
}

async function page(context: ConsoleContext, state: PageState): Promise<ConsoleResult> {
  const recent = await context.governance.ledger.query({ order: "desc", limit: RECENT_ROWS });
  const sessions = new Map<string, { lastAt: string; calls: number }>();
  const threads = new Set<string>();
  for (const row of recent) {
    const seen = sessions.get(row.sessionId);
    if (seen) seen.calls++;
    else if (sessions.size < RECENT_SESSIONS)
      sessions.set(row.sessionId, { lastAt: row.startedAt, calls: 1 });
    if (threads.size < RECENT_SESSIONS) threads.add(row.threadId ?? row.sessionId);
  }
  if (state.thread !== undefined && !threads.has(state.thread)) threads.add(state.thread);
  const chosen = state.session;
  const inList = chosen !== undefined && sessions.has(chosen);
  const form = html`<form method="post" action="${context.href("/evidence")}" id="evidence-form" class="evidence-form">
<input type="hidden" name="_csrf" value="${context.csrfToken}">
<label for="answer">Answer with citation labels such as <code>[PMID:22663011](https://pubmed.ncbi.nlm.nih.gov/22663011/)</code>, or claims as JSON <code>[{"text": …, "evidence": [{"mcpInvocationId": …, "recordId": …, "url": …}]}]</code></label>
<textarea id="answer" name="answer" required>${state.answer ?? ""}</textarea>
<div class="filters">
<label>Only invocations of session
<select id="session-select" name="session">
<option value="">any session</option>
${[...sessions].map(
  ([id, { lastAt, calls }]) =>
    html`<option value="${id}"${id === chosen ? html` selected` : ""}>${id} (${calls} call(s), last ${lastAt})</option>`,
)}
</select></label>
<label>or type a session id <input type="text" id="session-text" name="session_text" value="${inList ? "" : (chosen ?? "")}" maxlength="500"></label>
<button type="submit" class="primary" id="review-button">Review the evidence</button>
</div>
</form>`;
  const threadForm =
    context.threadAnswer === undefined
      ? ""
      : html`<form method="get" action="${context.href("/evidence")}" id="thread-form" class="filters">
<label>Or pick a thread
<select id="thread-select" name="thread">${[...threads].map(
          (id) => html`<option value="${id}"${id === state.thread ? html` selected` : ""}>${id}</option>`,
        )}</select></label>
<button type="submit" id="thread-button">Review the thread's final answer</button>
</form>`;
  const heading = state.thread
    ? html`<p id="reviewed-thread">The final answer of thread <code>${state.thread}</code>, reviewed against session <code>${state.session ?? state.thread}</code>.</p>`
    : "";
  const body = html`<p class="muted">A claim is accepted only when each citation traces to a successful governed invocation whose stored copies still verify and which really returned the cited record and URL.</p>
${threadForm}
${form}
${state.error ? html`<p class="error-box" role="alert" id="evidence-error">${state.error}</p>` : ""}
${state.run ? html`${heading}${verdict(state.run, context)}` : ""}
${state.run && state.session !== undefined && state.answer !== undefined && !state.run.fromJson ? researchObjectForm(context, { session: state.session, thread: state.thread, answer: state.answer }) : ""}`;
  return {
    kind: "page",
    title: "Evidence",
    section: "evidence",
    body,
    ...(state.status ? { status: state.status } : {}),
  };
}

function verdict(run: ReviewRun, context: ConsoleContext): SafeHtml {
  const accepted = run.claims.filter((claim) => claim.accepted).length;
  return html`<section id="evidence-result" data-accepted="${String(run.accepted)}">
<h2>Verdict ${run.accepted ? badge("every claim backed", "ok") : badge("not backed", "error")}</h2>
<p>${accepted} of ${run.claims.length} claim(s) accepted, reviewed at ${time(context.clock.now())}.</p>
${run.notes.map((note) => html`<p class="muted evidence-note">${note}</p>`)}
${renderClaims(run.claims, context)}
</section>`;
}

function field(value: string | null): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed.slice(0, 500);
}
