/**
 * Ledger rows as crate entities and back: an invocation row is a `CreateAction` (the tool its
 * instrument, the request its object, the results its result), an authorization row an
 * `AuthorizeAction` (who or what decided as its agent). The two directions live side by side so that
 * what the exporter writes is exactly what the verifier and the replay read.
 */
import type { AuthorizationRecord, InvocationRecord } from "../governance/audit/index.js";
import { type CrateEntity, ref, refIds, textOf } from "./crate-graph.js";
import { deciderOf, entityIds } from "./crate-vocabulary.js";

/** Where the objects a row names are in the crate: the `@id` of the entity of each `sha256:` ref. */
export type ObjectIdOf = (contentRef: string) => string;

/** The objects of a row that is a cache hit: the raw answer of the call the cache entry came from. */
export interface CacheOrigin {
  rawRef: string;
}

const ACTION_STATUS = {
  ok: "http://schema.org/CompletedActionStatus",
  error: "http://schema.org/FailedActionStatus",
} as const;

/**
 * The `CreateAction` of an invocation row.
 * @param row the ledger row
 * @param objectIdOf the entity of each of its objects
 * @param origin for a cache hit, the raw answer its cached result was normalized from
 * @returns the entity
 */
export function invocationAction(
  row: InvocationRecord,
  objectIdOf: ObjectIdOf,
  origin?: CacheOrigin,
): CrateEntity {
  const results = [row.normalizedRef, row.rawRef].flatMap((r) =>
    r === undefined ? [] : [ref(objectIdOf(r))],
  );
  const entity: CrateEntity = {
    "@id": entityIds.invocation(row.invocationId),
    "@type": "CreateAction",
    name: `${row.sourceId}/${row.toolId}`,
    identifier: row.invocationId,
    instrument: ref(entityIds.tool(row.sourceId, row.toolId)),
    agent: ref(entityIds.software),
    startTime: row.startedAt,
    endTime: row.finishedAt,
    actionStatus: ref(ACTION_STATUS[row.status]),
    sessionId: row.sessionId,
    sourceId: row.sourceId,
    toolId: row.toolId,
    attempts: row.attempts,
    cacheHit: row.cacheHit,
    queueWaitMs: row.queueWaitMs,
    durationMs: row.durationMs,
  };
  const optionalText: [string, string | undefined][] = [
    ["threadId", row.threadId],
    ["toolCallId", row.toolCallId],
    ["runId", row.runId],
    ["mcpToolName", row.mcpToolName],
    ["catalogRevision", row.catalogRevision],
    ["toolDefinitionHash", row.toolDefinitionHash],
    ["inputHash", row.inputHash],
  ];
  for (const [key, value] of optionalText) if (value !== undefined) entity[key] = value;
  if (row.requestRef !== undefined) {
    entity.object = [ref(objectIdOf(row.requestRef))];
    entity.request = ref(objectIdOf(row.requestRef));
  }
  if (results.length > 0) entity.result = results;
  if (row.rawRef !== undefined) entity.rawResult = ref(objectIdOf(row.rawRef));
  if (row.normalizedRef !== undefined) entity.normalizedResult = ref(objectIdOf(row.normalizedRef));
  if (origin !== undefined) entity.cachedRawResult = ref(objectIdOf(origin.rawRef));
  if (row.license !== undefined) entity.license = ref(entityIds.license(row.license));
  if (row.authorizationId !== undefined) {
    entity.authorization = ref(entityIds.authorization(row.authorizationId));
  }
  if (row.error !== undefined) {
    entity.error = row.error.message;
    entity.errorCode = row.error.code;
    entity.retryable = row.error.retryable;
    // A failed row keeps its own count of attempts (with the error), usually equal to the row's.
    if (row.error.attempts !== row.attempts) entity.errorAttempts = row.error.attempts;
    if (row.error.retryAfterMs !== undefined) entity.retryAfterMs = row.error.retryAfterMs;
  }
  return entity;
}

/** One problem found while reading a row back from its entity. */
export interface EntityIssue {
  entity: string;
  message: string;
}

/**
 * Reads an invocation row back from its `CreateAction`.
 * @param entity the action
 * @param byId every entity of the crate (to read the hashes of the objects and the licence text)
 * @param issues receives what is missing or malformed
 * @returns the row, or `undefined` when a required field is missing (an issue says which)
 */
export function invocationRecordOf(
  entity: CrateEntity,
  byId: ReadonlyMap<string, CrateEntity>,
  issues: EntityIssue[],
): InvocationRecord | undefined {
  const id = entity["@id"];
  const problem = (message: string) => issues.push({ entity: id, message });
  const text = (key: string) => textOf(entity, key);
  const status = refIds(entity.actionStatus)[0] === ACTION_STATUS.error ? "error" : "ok";
  const required = ["identifier", "sessionId", "sourceId", "toolId", "startTime", "endTime"] as const;
  for (const key of required) if (text(key) === undefined) problem(`has no ${key}`);
  const numbers = ["attempts", "queueWaitMs", "durationMs"] as const;
  for (const key of numbers) if (typeof entity[key] !== "number") problem(`has no numeric ${key}`);
  if (typeof entity.cacheHit !== "boolean") problem("has no boolean cacheHit");
  if (issues.some((issue) => issue.entity === id)) return undefined;
  const row: InvocationRecord = {
    invocationId: text("identifier") as string,
    sessionId: text("sessionId") as string,
    sourceId: text("sourceId") as string,
    toolId: text("toolId") as string,
    status,
    startedAt: text("startTime") as string,
    finishedAt: text("endTime") as string,
    durationMs: entity.durationMs as number,
    attempts: entity.attempts as number,
    cacheHit: entity.cacheHit as boolean,
    queueWaitMs: entity.queueWaitMs as number,
  };
  for (const key of ["threadId", "toolCallId", "runId", "mcpToolName", "catalogRevision"] as const) {
    const value = text(key);
    if (value !== undefined) row[key] = value;
  }
  for (const key of ["toolDefinitionHash", "inputHash"] as const) {
    const value = text(key);
    if (value !== undefined) row[key] = value;
  }
  const objectRef = (key: string): string | undefined => {
    const target = refIds(entity[key])[0];
    if (target === undefined) return undefined;
    const sha256 = textOf(byId.get(target), "sha256");
    if (sha256 === undefined)
      problem(`${key} names ${target}, which is not an object of the crate with a sha256`);
    return sha256 === undefined ? undefined : `sha256:${sha256}`;
  };
  const requestRef = objectRef("request");
  const rawRef = objectRef("rawResult");
  const normalizedRef = objectRef("normalizedResult");
  if (requestRef !== undefined) row.requestRef = requestRef;
  if (rawRef !== undefined) row.rawRef = rawRef;
  if (normalizedRef !== undefined) row.normalizedRef = normalizedRef;
  const licence = refIds(entity.license)[0];
  if (licence !== undefined) {
    const licenceText = textOf(byId.get(licence), "identifier");
    if (licenceText === undefined) problem(`license names ${licence}, which is not a licence of the crate`);
    else row.license = licenceText;
  }
  const authorization = refIds(entity.authorization)[0];
  if (authorization !== undefined) {
    const authorizationId = textOf(byId.get(authorization), "identifier");
    if (authorizationId === undefined)
      problem(`authorization names ${authorization}, which is not in the crate`);
    else row.authorizationId = authorizationId;
  }
  if (status === "error") {
    row.error = {
      code: text("errorCode") ?? "UPSTREAM_UNAVAILABLE",
      message: text("error") ?? "",
      retryable: entity.retryable === true,
      attempts: typeof entity.errorAttempts === "number" ? entity.errorAttempts : row.attempts,
    };
    if (typeof entity.retryAfterMs === "number") row.error.retryAfterMs = entity.retryAfterMs;
  }
  return row;
}

/**
 * The `AuthorizeAction` of an authorization row.
 * @param record the authorization row
 * @param authorized the invocation rows it let run (or refused)
 * @returns the entity
 */
export function authorizationAction(record: AuthorizationRecord, authorized: readonly string[]): CrateEntity {
  const entity: CrateEntity = {
    "@id": entityIds.authorization(record.id),
    "@type": "AuthorizeAction",
    name: `${record.decisionSource}: ${record.action} on ${record.resource}`,
    identifier: record.id,
    agent: ref(entityIds.decider(deciderOf(record.decisionSource))),
    endTime: record.createdAt,
    actionStatus: ref(ACTION_STATUS.ok),
    sessionId: record.sessionId,
    sourceId: record.sourceId,
    toolId: record.toolId,
    permissionAction: record.action,
    grantScope: record.resource,
    decisionSource: record.decisionSource,
    epoch: record.epoch,
  };
  if (record.threadId !== undefined) entity.threadId = record.threadId;
  if (record.toolCallId !== undefined) entity.toolCallId = record.toolCallId;
  if (authorized.length > 0) entity.object = authorized.map((id) => ref(entityIds.invocation(id)));
  return entity;
}

/**
 * Reads an authorization row back from its `AuthorizeAction`.
 * @param entity the action
 * @param issues receives what is missing or malformed
 * @returns the row, or `undefined` when a required field is missing
 */
export function authorizationRecordOf(
  entity: CrateEntity,
  issues: EntityIssue[],
): AuthorizationRecord | undefined {
  const text = (key: string) => textOf(entity, key);
  const keys = ["identifier", "sessionId", "sourceId", "toolId", "permissionAction", "grantScope"] as const;
  const missing = [...keys, "decisionSource", "endTime"].filter((key) => text(key) === undefined);
  if (typeof entity.epoch !== "number") missing.push("epoch");
  if (missing.length > 0) {
    issues.push({ entity: entity["@id"], message: `has no ${missing.join(", ")}` });
    return undefined;
  }
  const record: AuthorizationRecord = {
    id: text("identifier") as string,
    sessionId: text("sessionId") as string,
    sourceId: text("sourceId") as string,
    toolId: text("toolId") as string,
    action: text("permissionAction") as string,
    resource: text("grantScope") as string,
    decisionSource: text("decisionSource") as string,
    createdAt: text("endTime") as string,
    epoch: entity.epoch as number,
  };
  const threadId = text("threadId");
  const toolCallId = text("toolCallId");
  if (threadId !== undefined) record.threadId = threadId;
  if (toolCallId !== undefined) record.toolCallId = toolCallId;
  return record;
}
