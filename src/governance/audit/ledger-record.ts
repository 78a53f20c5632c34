/**
 * Checks on ledger rows and queries, shared by every store and by the `LedgerWriter`: one rule per
 * field, the errors a store reports (`DUPLICATE_ID`, `INVALID_INPUT`, a closed store).
 */
import { GovernanceError } from "../../core/index.js";
import type { ContentObject } from "./content-object.js";
import type { AuthorizationRecord, InvocationError, InvocationRecord } from "./ledger.js";

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Checks the objects given to `append` against what the ledger can take.
 * @param objects the objects of one append
 * @param maxInlineBytes the ledger's limit, or `undefined` for a ledger without `objects`
 * @throws GovernanceError `INVALID_INPUT` naming the object and the limit
 */
export function checkInlineObjects(
  objects: readonly ContentObject[] | undefined,
  maxInlineBytes: number | undefined,
): void {
  if (objects === undefined || objects.length === 0) return;
  if (maxInlineBytes === undefined) {
    throw new GovernanceError(
      "INVALID_INPUT",
      "This ledger keeps no objects; store them in the ContentStore and append the row alone.",
    );
  }
  for (const object of objects) {
    if (!SHA256_HEX.test(object?.sha256 ?? "") || object.bytes?.byteLength !== object.size) {
      throw new GovernanceError("INVALID_INPUT", "An inline object needs its sha256 (64 hex) and its bytes.");
    }
    if (object.size > maxInlineBytes) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `Object ${object.ref} has ${object.size} bytes, more than the ledger's inline limit of ${maxInlineBytes}; store it in the ContentStore first.`,
        { data: { ref: object.ref, size: object.size, maxInlineBytes } },
      );
    }
  }
}

type FieldKind = "id" | "text" | "text?" | "iso" | "count" | "ms" | "ms?" | "bool";
/** One problem of a record or query, with the path of its field. */
export interface Issue {
  path: string;
  message: string;
}

const INVOCATION_FIELDS: Record<Exclude<keyof InvocationRecord, "status" | "error">, FieldKind> = {
  invocationId: "id",
  sessionId: "id",
  principal: "text?",
  threadId: "text?",
  toolCallId: "text?",
  runId: "text?",
  sourceId: "id",
  toolId: "id",
  mcpToolName: "text?",
  startedAt: "iso",
  finishedAt: "iso",
  durationMs: "ms",
  attempts: "count",
  cacheHit: "bool",
  queueWaitMs: "ms",
  requestRef: "text?",
  rawRef: "text?",
  normalizedRef: "text?",
  authorizationId: "text?",
  license: "text?",
  catalogRevision: "text?",
  toolDefinitionHash: "text?",
  inputHash: "text?",
};
const ERROR_FIELDS: Record<keyof InvocationError, FieldKind> = {
  code: "id",
  message: "text",
  retryable: "bool",
  attempts: "count",
  retryAfterMs: "ms?",
};
const AUTHORIZATION_FIELDS: Record<keyof AuthorizationRecord, FieldKind> = {
  id: "id",
  sessionId: "id",
  principal: "text?",
  threadId: "text?",
  toolCallId: "text?",
  sourceId: "id",
  toolId: "id",
  action: "id",
  resource: "id",
  decisionSource: "id",
  createdAt: "iso",
  epoch: "count",
};
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
/** The rule of each field kind: its test and what the error says. Shared with `ledger-query.ts`. */
export const FIELD_RULES: Record<FieldKind, [test: (value: unknown) => boolean, message: string]> = {
  id: [(v) => typeof v === "string" && v !== "", "must be a non-empty string"],
  text: [(v) => typeof v === "string", "must be a string"],
  "text?": [(v) => typeof v === "string", "must be a string when present"],
  iso: [
    (v) => typeof v === "string" && ISO_TIMESTAMP.test(v) && !Number.isNaN(Date.parse(v)),
    "must be an ISO-8601 timestamp",
  ],
  count: [(v) => Number.isSafeInteger(v) && (v as number) >= 0, "must be a non-negative integer"],
  ms: [(v) => typeof v === "number" && Number.isFinite(v) && v >= 0, "must be a non-negative finite number"],
  "ms?": [
    (v) => typeof v === "number" && Number.isFinite(v) && v >= 0,
    "must be a non-negative finite number when present",
  ],
  bool: [(v) => typeof v === "boolean", "must be a boolean"],
};

/** A record's fields, each with its rule, listed once (a row is checked on every append). */
interface FieldRule {
  key: string;
  optional: boolean;
  test: (value: unknown) => boolean;
  message: string;
}

const rulesOf = (spec: Record<string, FieldKind>): readonly FieldRule[] =>
  Object.entries(spec).map(([key, kind]) => {
    const [test, message] = FIELD_RULES[kind];
    return { key, optional: kind.endsWith("?"), test, message };
  });

const INVOCATION_RULES = rulesOf(INVOCATION_FIELDS);
const ERROR_RULES = rulesOf(ERROR_FIELDS);
const AUTHORIZATION_RULES = rulesOf(AUTHORIZATION_FIELDS);

function pick(
  input: unknown,
  rules: readonly FieldRule[],
  issues: Issue[],
  prefix = "",
): Record<string, unknown> {
  const source = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const { key, optional, test, message } of rules) {
    const value = source[key];
    // Optional fields: undefined and "" both mean absent (the house rule for optional parameters).
    if (optional && (value === undefined || value === "")) continue;
    if (test(value)) out[key] = value;
    else issues.push({ path: prefix + key, message });
  }
  return out;
}

/**
 * The `INVALID_INPUT` error listing every issue.
 * @param what what was checked, e.g. `ledger query`
 * @param issues the problems, each with its field path
 * @returns the error, with `data.issues`
 */
export function invalid(what: string, issues: Issue[]): GovernanceError {
  const list = issues.map((issue) => `${issue.path} ${issue.message}`).join("; ");
  return new GovernanceError("INVALID_INPUT", `Invalid ${what}: ${list}.`, { data: { issues } });
}

/**
 * A clean copy of an invocation record: known fields only, empty optional strings dropped.
 * Implementations call this first so that every backend stores and returns the same shape.
 * @param record the record to check
 * @returns the normalized copy
 * @throws GovernanceError `INVALID_INPUT` listing every bad field with its path (`data.issues`)
 */
export function normalizeInvocationRecord(record: InvocationRecord): InvocationRecord {
  const issues: Issue[] = [];
  const out = pick(record, INVOCATION_RULES, issues);
  const { status, error } = record ?? {};
  if (status === "ok" || status === "error") out.status = status;
  else issues.push({ path: "status", message: 'must be "ok" or "error"' });
  if (status === "error") {
    if (typeof error === "object" && error !== null) out.error = pick(error, ERROR_RULES, issues, "error.");
    else issues.push({ path: "error", message: 'is required when status is "error"' });
  } else if (error !== undefined) {
    issues.push({ path: "error", message: 'must be absent unless status is "error"' });
  }
  if (issues.length > 0) throw invalid("invocation record", issues);
  return out as unknown as InvocationRecord;
}

/**
 * A clean copy of an authorization record (known fields only, empty optional strings dropped).
 * @param record the record to check
 * @returns the normalized copy
 * @throws GovernanceError `INVALID_INPUT` listing every bad field with its path (`data.issues`)
 */
export function normalizeAuthorizationRecord(record: AuthorizationRecord): AuthorizationRecord {
  const issues: Issue[] = [];
  const out = pick(record, AUTHORIZATION_RULES, issues);
  if (issues.length > 0) throw invalid("authorization record", issues);
  return out as unknown as AuthorizationRecord;
}

/**
 * The error of an append whose key is already recorded.
 * @param message what collided
 * @param existingInvocationId the recorded row, when the collision is on an invocation
 * @returns a `DUPLICATE_ID` error
 */
export function duplicateError(message: string, existingInvocationId?: string): GovernanceError {
  return new GovernanceError("DUPLICATE_ID", message, {
    data: existingInvocationId === undefined ? {} : { existingInvocationId },
  });
}

/**
 * The error every ledger method throws once the ledger is closed.
 * @returns an `UPSTREAM_UNAVAILABLE` error
 */
export function closedLedgerError(): GovernanceError {
  return new GovernanceError("UPSTREAM_UNAVAILABLE", "The ledger is closed.");
}
