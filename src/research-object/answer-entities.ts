/**
 * The answer in a crate: the text (`answer.md`), the review as `reviewAnswer` gave it (`review.json`),
 * and per fact a `Claim` (its text, the cited records, the calls it rests on) with a `ClaimReview` (the
 * verdict and why). Each cited record is a contextual entity with its identifier, version and licence.
 */
import type { AnswerFact, AnswerReview } from "../artifacts/index.js";
import type { McpRecord } from "../contract/index.js";
import type { CrateBuilder } from "./crate-builder.js";
import { type CrateEntity, ref } from "./crate-graph.js";
import { entityIds } from "./crate-vocabulary.js";

/** What the answer's entities need to know about the session. */
export interface AnswerContext {
  /** The normalized result of an invocation, when the crate holds it. */
  resultOf(invocationId: string): { records?: McpRecord[] } | undefined;
  /** Why an invocation's results are only referenced, when they are. */
  withheldReason(invocationId: string): string | undefined;
  /** The licence a source states for its records. */
  sourceLicence(sourceId: string): string | undefined;
}

/**
 * Adds the answer, its review and its claims to a crate.
 * @param builder the crate under construction
 * @param answer the final answer's text
 * @param review the review of that text against the crate's own contents
 * @param context reads of the session's results
 * @returns the `@id` of the answer file
 */
export function addAnswer(
  builder: CrateBuilder,
  answer: string,
  review: AnswerReview,
  context: AnswerContext,
): string {
  const encoder = new TextEncoder();
  const accepted = review.facts.filter((fact) => fact.accepted).length;
  const answerId = builder.ownFile(entityIds.answerFile, encoder.encode(answer), {
    name: "Final answer",
    description: "The agent's final answer, one fact per line, each with the citation labels of its records.",
    encodingFormat: "text/markdown",
  });
  const reviewFile = builder.ownFile(
    entityIds.reviewFile,
    encoder.encode(`${JSON.stringify(review, null, 2)}\n`),
    {
      name: "Claim review",
      description:
        "reviewAnswer's verdict on the answer, computed from this crate's own rows and objects at export; " +
        "sciencegate verify-crate computes it again and compares.",
      encodingFormat: "application/json",
      about: ref(answerId),
    },
  );
  builder.graph.add({
    "@id": entityIds.ratingAccepted,
    "@type": "Rating",
    name: "accepted",
    ratingValue: 1,
    bestRating: 1,
    worstRating: 0,
  });
  builder.graph.add({
    "@id": entityIds.ratingRefused,
    "@type": "Rating",
    name: "not backed",
    ratingValue: 0,
    bestRating: 1,
    worstRating: 0,
  });
  const factReviews = review.facts.map((fact, index) => addFact(builder, fact, index + 1, answerId, context));
  builder.graph.add({
    "@id": entityIds.answerReview,
    "@type": "Review",
    name: "Review of the final answer",
    itemReviewed: ref(answerId),
    reviewRating: ref(review.accepted ? entityIds.ratingAccepted : entityIds.ratingRefused),
    reviewBody:
      `${accepted} of ${review.facts.length} facts accepted` +
      (review.omittedFacts > 0 ? `, ${review.omittedFacts} not reviewed (past the review's bound)` : "") +
      `; ${review.searchedInvocations} successful calls searched for the cited labels.`,
    author: ref(entityIds.software),
    isBasedOn: ref(reviewFile),
    hasPart: factReviews.map(ref),
  });
  return answerId;
}

function addFact(
  builder: CrateBuilder,
  fact: AnswerFact,
  position: number,
  answerId: string,
  context: AnswerContext,
): string {
  const records: string[] = [];
  const calls: string[] = [];
  for (const citation of fact.citations) {
    if (citation.invocationId === undefined || citation.sourceId === undefined) continue;
    calls.push(entityIds.invocation(citation.invocationId));
    const recordId = citation.evidence?.recordId;
    if (recordId !== undefined) {
      records.push(
        addRecord(builder, citation.sourceId, citation.invocationId, recordId, citation.label, context),
      );
    }
  }
  if (fact.extractionInvocationId !== undefined)
    calls.push(entityIds.invocation(fact.extractionInvocationId));
  const claim: CrateEntity = {
    "@id": entityIds.fact(fact.id),
    "@type": "Claim",
    name: `Fact ${position}`,
    identifier: fact.id,
    text: fact.text,
    position,
    appearance: ref(answerId),
  };
  if (records.length > 0) claim.citation = records.map(ref);
  if (calls.length > 0) claim.isBasedOn = [...new Set(calls)].map(ref);
  builder.graph.add(claim);
  const reviewId = entityIds.factReview(fact.id);
  builder.graph.add({
    "@id": reviewId,
    "@type": "ClaimReview",
    name: `Review of fact ${position}`,
    itemReviewed: ref(claim["@id"]),
    claimReviewed: fact.text,
    reviewRating: ref(fact.accepted ? entityIds.ratingAccepted : entityIds.ratingRefused),
    reviewBody: fact.accepted
      ? "Backed: every citation traced to a successful governed call whose stored result returned it" +
        (fact.extractionInvocationId ? ", and the paper's full text was extracted." : ".")
      : fact.problems.join("; "),
    author: ref(entityIds.software),
  });
  return reviewId;
}

function addRecord(
  builder: CrateBuilder,
  sourceId: string,
  invocationId: string,
  recordId: string,
  label: string,
  context: AnswerContext,
): string {
  const id = entityIds.record(sourceId, recordId);
  const withheld = context.withheldReason(invocationId);
  const record = withheld
    ? undefined
    : context.resultOf(invocationId)?.records?.find((candidate) => candidate?.identifier === recordId);
  const entity: CrateEntity = {
    "@id": id,
    "@type": "CreativeWork",
    identifier: recordId,
    citationLabel: `[${label}]`,
    isPartOf: ref(entityIds.source(sourceId)),
    subjectOf: ref(entityIds.invocation(invocationId)),
  };
  if (record) {
    entity.name = record.title;
    entity.url = record.url;
    if (record.primaryCitation?.version !== undefined) entity.version = record.primaryCitation.version;
    const licence = stringOr(record.structuredData?.license) ?? context.sourceLicence(sourceId);
    if (licence !== undefined) entity.license = ref(builder.licence(licence));
  } else {
    entity.name = label;
    entity.conditionsOfAccess = `Only its identifier is in this crate: ${withheld ?? "the result that returned it is not in the crate"}.`;
  }
  // A record cited from two calls is one entity: the first description stands, the calls are listed.
  if (builder.graph.has(id)) builder.graph.link(id, "subjectOf", entityIds.invocation(invocationId));
  else builder.graph.add(entity);
  return id;
}

function stringOr(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
