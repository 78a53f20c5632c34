/**
 * `verifyResearchObject`: checks a crate with nothing but the crate. Every file described with a
 * SHA-256 is re-hashed, every reference is resolved, every call is read back into a ledger row, and the
 * claim review is run again on the crate's own rows and objects and compared with the verdicts the
 * crate recorded at export. Each problem names what it breaks: the calls, facts and verdicts that rest
 * on it.
 */
import type { AnswerReview } from "../artifacts/index.js";
import { sha256Hex } from "../core/index.js";
import type { InvocationRecord } from "../governance/audit/index.js";
import { reviewCrateAnswer } from "./crate-evidence.js";
import {
  type OpenedResearchObject,
  type OpenResearchObjectLimits,
  openResearchObject,
} from "./crate-files.js";
import { asList, type CrateEntity, hasType, indexGraph, refIds, textOf } from "./crate-graph.js";
import { entityIds, METADATA_FILE, PREVIEW_FILE } from "./crate-vocabulary.js";
import { type EntityIssue, invocationRecordOf } from "./ledger-entities.js";

/** What kind of problem a check found. */
export type CrateProblemCode =
  /** A file the metadata describes is not in the crate. */
  | "file_missing"
  /** A file's bytes no longer hash to the SHA-256 the metadata gives. */
  | "hash_mismatch"
  /** A file's size differs from its `contentSize`. */
  | "size_mismatch"
  /** A file is in the crate but the metadata does not describe it. */
  | "undescribed_file"
  /** An entry was not read: a link, a path that leaves the crate, or past a bound. */
  | "refused_entry"
  /** An `@id` reference names no entity of the crate and is not an absolute URL. */
  | "unresolved_reference"
  /** An entity has no `@type`, or an `@id` is used twice. */
  | "malformed_entity"
  /** The answer's text no longer matches the claims the crate records. */
  | "claim_changed"
  /** A claim's citation or the calls it rests on differ from where its labels trace. */
  | "citation_changed"
  /** The review run again on the crate gives another verdict than the one recorded at export. */
  | "verdict_changed";

/** One problem, and what it breaks. */
export interface CrateProblem {
  code: CrateProblemCode;
  /** The file path or entity `@id` the problem is about. */
  subject: string;
  message: string;
  /** The calls, facts and verdicts that rest on the subject (entity ids). */
  breaks: string[];
}

/** The outcome of {@link verifyResearchObject}. */
export interface CrateVerification {
  location: string;
  /** No problem was found. */
  ok: boolean;
  /** Files re-hashed. */
  checkedFiles: number;
  /** Entities of the metadata, and calls read back into ledger rows. */
  entities: number;
  invocations: number;
  problems: CrateProblem[];
  /** The review run again from the crate, when the crate has an answer. */
  review?: { facts: number; accepted: number; sameAsExport: boolean } | undefined;
}

const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * Verifies a research object from the crate alone.
 * @param location the crate's folder or `.zip`
 * @param limits bounds of reading it
 * @returns every problem found, each with what it breaks; `ok` when there is none
 * @throws GovernanceError `NOT_FOUND` / `INVALID_INPUT` when `location` is not a readable crate
 * @example
 * const report = await verifyResearchObject("agent-demo.zip");
 * for (const problem of report.problems) console.log(problem.code, problem.subject, problem.message);
 */
export async function verifyResearchObject(
  location: string,
  limits?: OpenResearchObjectLimits,
): Promise<CrateVerification> {
  const crate = await openResearchObject(location, limits);
  const graph = crate.metadata["@graph"];
  const byId = indexGraph(crate.metadata);
  const problems: CrateProblem[] = [];
  const breaks = dependentsOf(graph, byId);
  const report = (code: CrateProblemCode, subject: string, message: string) =>
    problems.push({ code, subject, message, breaks: breaks(subject) });

  checkEntities(graph, byId, report);
  const checkedFiles = await checkFiles(crate, graph, byId, report);
  const issues: EntityIssue[] = [];
  const rows = graph
    .filter((entity) => hasType(entity, "CreateAction"))
    .flatMap((entity) => invocationRecordOf(entity, byId, issues) ?? []);
  for (const issue of issues) report("malformed_entity", issue.entity, `${issue.entity} ${issue.message}.`);
  const review = await checkReview(crate, byId, rows, report);
  return {
    location: crate.location,
    ok: problems.length === 0,
    checkedFiles,
    entities: graph.length,
    invocations: rows.length,
    problems,
    review,
  };
}

type Report = (code: CrateProblemCode, subject: string, message: string) => void;

function checkEntities(graph: readonly CrateEntity[], byId: Map<string, CrateEntity>, report: Report): void {
  const seen = new Set<string>();
  for (const entity of graph) {
    const id = entity["@id"];
    if (seen.has(id)) report("malformed_entity", id, `${id} is described twice.`);
    seen.add(id);
    if (asList(entity["@type"]).length === 0) report("malformed_entity", id, `${id} has no @type.`);
    for (const [property, value] of Object.entries(entity)) {
      if (property.startsWith("@")) continue;
      for (const target of refIds(value)) {
        if (!byId.has(target) && !ABSOLUTE_URI.test(target)) {
          report("unresolved_reference", id, `${id} ${property} names ${target}, which is not in the crate.`);
        }
      }
    }
  }
}

async function checkFiles(
  crate: OpenedResearchObject,
  graph: readonly CrateEntity[],
  byId: Map<string, CrateEntity>,
  report: Report,
): Promise<number> {
  let checked = 0;
  const present = new Set(crate.paths);
  const callers = callersOf(graph);
  for (const entity of graph) {
    const id = entity["@id"];
    const sha256 = textOf(entity, "sha256");
    if (!hasType(entity, "File") || sha256 === undefined || entity.redistributed === false) continue;
    const bytes = present.has(id) ? await crate.read(id) : undefined;
    const what = describe(entity, callers);
    if (bytes === undefined) {
      report("file_missing", id, `${id} (${what}) is described but not in the crate.`);
      continue;
    }
    checked++;
    const actual = sha256Hex(bytes);
    if (actual !== sha256) {
      report(
        "hash_mismatch",
        id,
        `${id} (${what}) no longer matches its SHA-256: ${sha256} recorded, ${actual} now.`,
      );
      continue;
    }
    const size = textOf(entity, "contentSize");
    if (size !== undefined && Number(size) !== bytes.byteLength) {
      report("size_mismatch", id, `${id} (${what}) has ${bytes.byteLength} bytes, not ${size}.`);
    }
  }
  for (const path of crate.paths) {
    if (path === METADATA_FILE || path === PREVIEW_FILE || byId.has(path)) continue;
    report("undescribed_file", path, `${path} is in the crate but the metadata does not describe it.`);
  }
  for (const { path, reason } of crate.refused)
    report("refused_entry", path, `${path} was not read: ${reason}.`);
  return checked;
}

/** Runs the review again on the crate and compares it with the verdicts recorded at export. */
async function checkReview(
  crate: OpenedResearchObject,
  byId: Map<string, CrateEntity>,
  rows: InvocationRecord[],
  report: Report,
): Promise<CrateVerification["review"]> {
  const answerEntity = byId.get(entityIds.answerFile);
  if (answerEntity === undefined) return undefined;
  const answerBytes = await crate.read(entityIds.answerFile);
  if (answerBytes === undefined) return undefined; // reported as file_missing
  const sessionId = textOf(byId.get(entityIds.session), "sessionId") ?? rows[0]?.sessionId ?? "";
  const objects: Uint8Array[] = [];
  for (const path of crate.paths) {
    if (!path.startsWith("objects/")) continue;
    const bytes = await crate.read(path);
    if (bytes) objects.push(bytes);
  }
  const { review, refusedRows } = await reviewCrateAnswer(
    { rows, objects },
    new TextDecoder().decode(answerBytes),
    sessionId,
  );
  for (const { invocationId, message } of refusedRows) {
    report(
      "malformed_entity",
      entityIds.invocation(invocationId),
      `The call could not be read back as a ledger row: ${message}`,
    );
  }
  const claims = [...byId.values()].filter((entity) => hasType(entity, "Claim"));
  let same = claims.length === review.facts.length;
  if (!same) {
    report(
      "claim_changed",
      entityIds.answerFile,
      `The answer now has ${review.facts.length} facts; the crate recorded ${claims.length} claims.`,
    );
  }
  for (const fact of review.facts) {
    const claim = byId.get(entityIds.fact(fact.id));
    if (claim === undefined) continue;
    const claimId = claim["@id"];
    if (textOf(claim, "text") !== fact.text) {
      same = false;
      report(
        "claim_changed",
        claimId,
        `${fact.id} reads "${fact.text}" in answer.md, but the crate's claim says "${textOf(claim, "text") ?? ""}".`,
      );
    }
    // A label that no longer traces (its result is gone or changed) is the verdict's problem, reported
    // below; the recorded links are compared only when every label still traces somewhere.
    const tracesAll = fact.citations.every((c) => c.invocationId !== undefined);
    const traced = fact.citations.flatMap((c) =>
      c.invocationId ? [entityIds.invocation(c.invocationId)] : [],
    );
    if (fact.extractionInvocationId) traced.push(entityIds.invocation(fact.extractionInvocationId));
    const recorded = refIds(claim.isBasedOn);
    if (tracesAll && !sameSet(traced, recorded)) {
      same = false;
      report(
        "citation_changed",
        claimId,
        `${fact.id} rests on ${names(recorded, byId)} in the crate, but its citations trace to ${names(traced, byId)}.`,
      );
    }
    const records = fact.citations.flatMap((c) =>
      c.sourceId && c.evidence?.recordId ? [entityIds.record(c.sourceId, c.evidence.recordId)] : [],
    );
    if (tracesAll && !sameSet(records, refIds(claim.citation))) {
      same = false;
      report(
        "citation_changed",
        claimId,
        `${fact.id} cites ${refIds(claim.citation).join(", ") || "nothing"} in the crate, but its labels ` +
          `(${fact.citations.map((c) => c.label).join(", ")}) name ${records.join(", ") || "no record of the crate"}.`,
      );
    }
    const verdict = [...byId.values()].find(
      (e) => hasType(e, "ClaimReview") && refIds(e.itemReviewed).includes(claimId),
    );
    const wasAccepted = refIds(verdict?.reviewRating)[0] === entityIds.ratingAccepted;
    if (verdict !== undefined && wasAccepted !== fact.accepted) {
      same = false;
      report(
        "verdict_changed",
        claimId,
        `${fact.id} was ${wasAccepted ? "accepted" : "not backed"} at export; from this crate it is ` +
          `${fact.accepted ? "accepted" : `not backed: ${fact.problems.join("; ").replace(/\.+$/, "")}`}.`,
      );
    }
  }
  const recorded = await readRecordedReview(crate);
  if (
    recorded !== undefined &&
    same &&
    JSON.stringify(verdicts(recorded)) !== JSON.stringify(verdicts(review))
  ) {
    same = false;
    report(
      "verdict_changed",
      entityIds.reviewFile,
      "review.json differs from the review run again on this crate.",
    );
  }
  return {
    facts: review.facts.length,
    accepted: review.facts.filter((f) => f.accepted).length,
    sameAsExport: same,
  };
}

/** The parts of a review that must not change: per fact its text, verdict and where each label traces. */
function verdicts(review: AnswerReview): unknown {
  return review.facts.map((fact) => [
    fact.id,
    fact.text,
    fact.accepted,
    fact.citations.map((c) => [c.label, c.invocationId ?? null]),
    fact.extractionInvocationId ?? null,
  ]);
}

async function readRecordedReview(crate: OpenedResearchObject): Promise<AnswerReview | undefined> {
  const bytes = await crate.read(entityIds.reviewFile);
  if (bytes === undefined) return undefined;
  try {
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as AnswerReview;
    return Array.isArray(parsed?.facts) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What rests on an entity: the calls whose objects it is, the facts resting on those calls (or
 * appearing in it), and the answer's review for the answer and review files.
 */
function dependentsOf(
  graph: readonly CrateEntity[],
  byId: Map<string, CrateEntity>,
): (id: string) => string[] {
  const users = new Map<string, Set<string>>();
  const note = (target: string, user: string) =>
    users.set(target, (users.get(target) ?? new Set()).add(user));
  for (const entity of graph) {
    if (hasType(entity, "CreateAction")) {
      for (const key of ["request", "rawResult", "normalizedResult", "cachedRawResult", "object", "result"]) {
        for (const target of refIds(entity[key])) note(target, entity["@id"]);
      }
    }
    if (hasType(entity, "Claim")) {
      for (const target of [
        ...refIds(entity.isBasedOn),
        ...refIds(entity.appearance),
        ...refIds(entity.citation),
      ]) {
        note(target, entity["@id"]);
      }
    }
  }
  return (id) => {
    const out = new Set<string>();
    const visit = (target: string) => {
      for (const user of users.get(target) ?? []) {
        if (out.has(user)) continue;
        out.add(user);
        visit(user);
      }
    };
    visit(id);
    if (id === entityIds.answerFile || id === entityIds.reviewFile) out.add(entityIds.answerReview);
    return [...out].sort((a, b) => rank(a, byId) - rank(b, byId) || a.localeCompare(b));
  };
}

function rank(id: string, byId: Map<string, CrateEntity>): number {
  const entity = byId.get(id);
  if (entity && hasType(entity, "CreateAction")) return 0;
  return entity && hasType(entity, "Claim") ? 1 : 2;
}

/** The invocations whose objects each entity is (by `@id`). */
function callersOf(graph: readonly CrateEntity[]): Map<string, string[]> {
  const callers = new Map<string, string[]>();
  for (const entity of graph) {
    if (!hasType(entity, "CreateAction")) continue;
    const invocation = textOf(entity, "identifier") ?? entity["@id"];
    const targets = new Set(OBJECT_KEYS.flatMap((key) => refIds(entity[key])));
    for (const target of targets) callers.set(target, [...(callers.get(target) ?? []), invocation]);
  }
  return callers;
}

const OBJECT_KEYS = ["request", "rawResult", "normalizedResult", "cachedRawResult", "result"] as const;

function describe(entity: CrateEntity, callers: Map<string, string[]>): string {
  const name = textOf(entity, "name") ?? "a file";
  const ids = callers.get(entity["@id"]) ?? [];
  return ids.length === 0 ? name : `${name}, invocation ${ids.join(", ")}`;
}

function names(ids: readonly string[], byId: Map<string, CrateEntity>): string {
  if (ids.length === 0) return "no call";
  return ids.map((id) => `${id} (${textOf(byId.get(id), "name") ?? "not in the crate"})`).join(", ");
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((x) => right.has(x));
}
