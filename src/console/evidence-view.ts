/**
 * The Evidence page's verdicts as one view, whether they came from an answer's text (`reviewAnswer`)
 * or from pasted claims (`reviewEvidence`): per claim, each piece of evidence with its verdict, the
 * invocation it rests on (a link to its page) and the refusal's reason and message.
 */
import type { AnswerReview, EvidenceReview, ReviewedEvidence } from "../artifacts/index.js";
import { html, type SafeHtml } from "./console-html.js";
import type { ConsoleContext } from "./console-route.js";
import { badge, externalLink } from "./console-ui.js";

/** One piece of evidence as the page shows it. */
export interface EvidenceView {
  /** The label the answer cited (`PMID:22663011`); absent for pasted claims. */
  label?: string | undefined;
  invocationId?: string | undefined;
  recordId?: string | undefined;
  url?: string | undefined;
  accepted: boolean;
  /** A rejection code of `reviewEvidence`, or `not_traced` for a label no invocation returned. */
  reason?: string | undefined;
  message?: string | undefined;
  record?: ReviewedEvidence["record"];
  extractionInvocationId?: string | undefined;
}

/** One claim as the page shows it. */
export interface ClaimView {
  id: string;
  text: string;
  accepted: boolean;
  evidence: EvidenceView[];
  /** Problems of the claim itself (no citation, citations past the limit). */
  problems: string[];
}

/**
 * The claims of a `reviewEvidence` verdict.
 * @param review the verdict
 */
export function claimsOfReview(review: EvidenceReview): ClaimView[] {
  return review.claims.map((claim) => ({
    id: claim.id,
    text: claim.text,
    accepted: claim.accepted,
    evidence: claim.evidence.map((item) => evidenceView(item)),
    problems: [],
  }));
}

/**
 * The facts of a `reviewAnswer` verdict as claims; a label no invocation returned is refused evidence.
 * @param review the verdict
 */
export function claimsOfAnswer(review: AnswerReview): ClaimView[] {
  return review.facts.map((fact) => ({
    id: fact.id,
    text: fact.text,
    accepted: fact.accepted,
    evidence: fact.citations.map((citation) =>
      citation.evidence
        ? evidenceView(citation.evidence, citation.label)
        : {
            label: citation.label,
            url: citation.url,
            accepted: false,
            reason: "not_traced",
            message: `No successful governed invocation in the reviewed scope returned a record labelled ${citation.label}; cite a record a governed call returned, or review against the session that made the call.`,
          },
    ),
    problems: [
      ...(fact.citations.length === 0
        ? [
            "No citation: each fact needs the label of a record a governed call returned, e.g. [PMID:22663011].",
          ]
        : []),
      ...(fact.omittedCitations > 0
        ? [
            `${fact.omittedCitations} more citation(s) of this fact were past the review's limit and not checked.`,
          ]
        : []),
    ],
  }));
}

function evidenceView(item: ReviewedEvidence, label?: string): EvidenceView {
  return {
    label,
    invocationId: item.mcpInvocationId,
    recordId: item.recordId,
    url: item.url,
    accepted: item.accepted,
    reason: item.reason,
    message: item.message,
    record: item.record,
    extractionInvocationId: item.extraction?.invocationId,
  };
}

/**
 * The claims as an ordered list (`#claims`, one `li.claim[data-id][data-accepted]` each).
 * @param claims the claims
 * @param context links
 */
export function renderClaims(claims: readonly ClaimView[], context: ConsoleContext): SafeHtml {
  if (claims.length === 0) return html`<p class="muted">The text holds no fact to review.</p>`;
  return html`<ol class="claims" id="claims">${claims.map(
    (claim) => html`<li class="claim" data-id="${claim.id}" data-accepted="${String(claim.accepted)}">
<p class="claim-text">${claim.accepted ? badge("accepted", "ok") : badge("rejected", "error")} ${claim.text}</p>
${claim.problems.map((problem) => html`<p class="error-box claim-problem">${problem}</p>`)}
${
  claim.evidence.length === 0
    ? ""
    : html`<ul class="evidence">${claim.evidence.map((item) => evidenceItem(item, context))}</ul>`
}
</li>`,
  )}</ol>`;
}

function evidenceItem(item: EvidenceView, context: ConsoleContext): SafeHtml {
  // A refused invocation id may name nothing in the ledger (or another session's row): linked only when it is evidence.
  const linked = item.invocationId !== undefined && (item.accepted || isInLedgerReason(item.reason));
  const invocation =
    item.invocationId === undefined
      ? ""
      : linked
        ? html` <a class="invocation-link" href="${context.href(`/invocations/${encodeURIComponent(item.invocationId)}`)}">invocation <code>${item.invocationId}</code></a>`
        : html` invocation <code>${item.invocationId}</code>`;
  const record = item.record
    ? html` · record <code>${item.record.identifier}</code> <span class="record-title">${item.record.title}</span> ${externalLink(item.record.citation.url, "link")}${
        item.record.fullTextRetrieved ? html` ${badge("full text", "ok")}` : ""
      }`
    : item.recordId
      ? html` · record <code>${item.recordId}</code>`
      : "";
  const extraction = item.extractionInvocationId
    ? html` · full text from <a href="${context.href(`/invocations/${encodeURIComponent(item.extractionInvocationId)}`)}">extraction <code>${item.extractionInvocationId}</code></a>`
    : "";
  return html`<li class="evidence-item" data-accepted="${String(item.accepted)}"${
    item.reason ? html` data-reason="${item.reason}"` : ""
  }${item.invocationId ? html` data-invocation="${item.invocationId}"` : ""}>
${item.accepted ? badge("accepted", "ok") : badge(item.reason ?? "refused", "error")}${
  item.label ? html` <code class="citation-label">${item.label}</code>` : ""
}${invocation}${record}${extraction}${
  // A refused URL is the answer's, not a source's: shown, never linked.
  item.url && !item.record ? html` · cited URL <code class="cited-url">${item.url}</code>` : ""
}
${item.message ? html`<p class="evidence-message">${item.message}</p>` : ""}
</li>`;
}

/** Rejections of an invocation that is in the ledger (its page shows why). */
function isInLedgerReason(reason: string | undefined): boolean {
  return reason !== undefined && reason !== "not_governed" && reason !== "not_traced";
}
