/**
 * How the broker records a call: the row it builds while the call runs, the objects it keeps with the
 * row (small ones inline, in the row's commit; large ones in the content store first) and the one append
 * through the ledger's writer, which settles once the row is durable (see ARCHITECTURE.md, "Record").
 */
import { type McpToolResult, toGovernanceError } from "../../contract/index.js";
import { type Clock, GovernanceError, hashCanonical, optional } from "../../core/index.js";
import {
  type ContentObject,
  type ContentStore,
  type InvocationRecord,
  jsonObject,
  jsonObjectAsIs,
  type LedgerWriter,
  stageObject,
  withLedgerObjects,
} from "../audit/index.js";
import { neutralizeDeep, neutralizePromptTags } from "../envelope/index.js";
import type { InvokeRequest, RecordedRead } from "./broker-types.js";
import type { PreparedCall } from "./in-process-source.js";
import { checkingDepth } from "./refuse-too-deep.js";

/** An invocation row while its call runs: everything but the outcome. */
export type Row = Omit<InvocationRecord, "status" | "finishedAt" | "durationMs">;

/** One invocation in progress: its row and the objects to commit with it. */
export interface Call {
  row: Row;
  /** Objects the ledger keeps inline, written in the row's commit. */
  inline: ContentObject[];
  /**
   * What the row stores once the call has a result: the server's raw result, and the normalized one
   * handed back, as a value or (cached results) as its object already.
   */
  results?: { raw?: unknown; normalized: McpToolResult | ContentObject } | undefined;
  /** The validated arguments, hashed onto the row (`inputHash`) when it is written. */
  input?: Record<string, unknown> | undefined;
  /** Whether the call's span records: its rate-limit wait and attempts are then spans too. */
  traced: boolean;
  /**
   * Writes the call's authorization row when the permission hook left it unwritten (a safe call's):
   * called just before the call's own row, so that both share one commit.
   */
  commitAuthorization?: (() => Promise<void>) | undefined;
  /**
   * Resolves once the authorization row `commitAuthorization` writes is numbered and held (the
   * permission hook's `ready`): nothing of the call starts before; see `authorizationHeld`.
   */
  authorizationReady?: (() => Promise<void>) | undefined;
  /** A run its source prepared already (`Broker.recordRun`): nothing is prepared or authorized again. */
  prepared?: PreparedCall | undefined;
}

/**
 * Waits (once) until the call's held authorization row is numbered and held. When it cannot be (the
 * grant store failed), the row is never written: the call loses its authorization, as if the hook had
 * refused it.
 * @param call the call
 * @returns `undefined`, or what the hook's `ready` threw
 */
export async function authorizationHeld(call: Call): Promise<unknown> {
  const ready = call.authorizationReady;
  if (ready === undefined) return undefined;
  call.authorizationReady = undefined;
  try {
    await ready();
    return undefined;
  } catch (error) {
    call.commitAuthorization = undefined;
    delete call.row.authorizationId;
    return error ?? new Error("The authorization could not be held.");
  }
}

/** Builds and writes the rows of one broker's calls. */
export class CallRecorder {
  /** Reads objects wherever the ledger or the content store keeps them. */
  readonly objects: ContentStore;
  readonly #writer: LedgerWriter;
  readonly #store: ContentStore;
  readonly #clock: Clock;
  readonly #newId: () => string;

  /**
   * @param writer the ledger's one writer
   * @param store the content store of objects too large to keep inline
   * @param clock stamps rows
   * @param newId invocation id generator
   */
  constructor(writer: LedgerWriter, store: ContentStore, clock: Clock, newId: () => string) {
    this.#writer = writer;
    this.#store = store;
    this.#clock = clock;
    this.#newId = newId;
    this.objects = withLedgerObjects(store, writer.reader);
  }

  /**
   * A new invocation row of a call, without its tool call id (the caller adds it where the key is its own).
   * @param request the call
   * @param startedMs when it started
   */
  newRow(
    request: Pick<InvokeRequest, "sessionId" | "principal" | "sourceId" | "toolId" | "threadId" | "runId">,
    startedMs: number,
  ): Row {
    return {
      invocationId: this.#newId(),
      sessionId: request.sessionId,
      sourceId: request.sourceId,
      toolId: request.toolId,
      startedAt: new Date(startedMs).toISOString(),
      attempts: 0,
      cacheHit: false,
      queueWaitMs: 0,
      ...optional({ principal: request.principal, threadId: request.threadId, runId: request.runId }),
    };
  }

  /**
   * Keeps an object for the call's row: a small one goes into the row's commit, a larger one (or any,
   * when the ledger keeps none) is written to the content store now, before the row names it.
   * @returns the object's ref, at once for an object kept inline
   */
  stage(call: Call, object: ContentObject): string | Promise<string> {
    return stageObject(this.#writer.maxInlineBytes, this.#store, call.inline, object);
  }

  /**
   * Writes the call's one row with its objects (a success's results become objects first).
   * @param call the call
   * @param status its outcome
   * @param startedMs when it started
   * @param finishedMs when it ended @default now
   * @returns once the row, and the authorization row it names, are durable
   * @throws what the writer throws (`DUPLICATE_ID`, `UPSTREAM_UNAVAILABLE` when the row could be
   *   neither committed nor spooled)
   */
  async record(
    call: Call,
    status: "ok" | "error",
    startedMs: number,
    finishedMs = this.#clock.now(),
  ): Promise<void> {
    if (status === "ok") await this.#stageResults(call);
    if (call.input !== undefined) call.row.inputHash ??= hashCanonical(call.input);
    const record: InvocationRecord = {
      ...call.row,
      status,
      finishedAt: new Date(finishedMs).toISOString(),
      durationMs: Math.max(0, finishedMs - startedMs),
    };
    // A call that ended before anything of it started may not have waited for its row to be held.
    await authorizationHeld(call);
    // The authorization row the call ran on, when not written yet, is queued first, in the same turn:
    // the two share a commit. The call is recorded once both are durable.
    const authorized = call.commitAuthorization?.();
    const appended = this.#writer.append(record, call.inline);
    if (authorized) await Promise.all([appended, authorized]);
    else await appended;
  }

  /**
   * Builds and writes the one row of a read the broker did not send (`Broker.recordRead`), as a call's:
   * its request object, the answer's object when kept, the error's message neutralized.
   * @param read what was read, by whom, when, and its outcome
   * @returns once the row is durable
   * @throws what the writer throws
   */
  async recordRead(read: RecordedRead): Promise<void> {
    const call: Call = {
      row: {
        ...this.newRow(read, read.startedMs),
        mcpToolName: read.name,
        attempts: read.attempts,
        ...optional({ toolCallId: read.toolCallId }),
      },
      inline: [],
      traced: false,
    };
    call.row.requestRef = await this.stage(call, jsonObject(read.request));
    const { outcome } = read;
    if ("error" in outcome) {
      call.row.error = {
        code: outcome.error.code,
        // A server's error text is external: made inert as in every other row.
        message: neutralizePromptTags(outcome.error.message),
        retryable: outcome.error.retryable,
        attempts: read.attempts,
      };
    } else if (outcome.keep) {
      call.results = { normalized: jsonObjectAsIs(outcome.result) };
    }
    await this.record(call, "error" in outcome ? "error" : "ok", read.startedMs, read.finishedMs);
  }

  /** The content objects of a call's results on its row (large ones written to the content store first). */
  async #stageResults(call: Call): Promise<void> {
    const { results } = call;
    if (results === undefined) return;
    // The normalized result walked the same value within the depth limit; a raw result that still
    // cannot be serialized is left without its object rather than losing the row.
    let raw: ContentObject | undefined;
    if ("raw" in results) {
      try {
        raw = checkingDepth(() => jsonObjectAsIs(results.raw));
      } catch {
        raw = undefined;
      }
    }
    const { normalized } = results;
    const normalizedObject = isContentObject(normalized) ? normalized : jsonObjectAsIs(normalized);
    const writes: Promise<string>[] = [];
    for (const object of [raw, normalizedObject]) {
      const staged = object === undefined ? undefined : this.stage(call, object);
      if (staged instanceof Promise) writes.push(staged);
    }
    // Large objects are written before the row that names them.
    if (writes.length > 0) await Promise.all(writes);
    if (raw) call.row.rawRef = raw.ref;
    call.row.normalizedRef = normalizedObject.ref;
  }
}

function isContentObject(value: McpToolResult | ContentObject): value is ContentObject {
  return "bytes" in value && value.bytes instanceof Uint8Array;
}

/**
 * The request object of a call: source, tool and the arguments as given (its ref is `requestRef`).
 * @param request the call
 * @returns the object
 * @throws GovernanceError `INVALID_INPUT` for arguments that cannot be stored as JSON
 */
export function requestObject(request: Pick<InvokeRequest, "sourceId" | "toolId" | "input">): ContentObject {
  return jsonObject({ sourceId: request.sourceId, toolId: request.toolId, input: request.input ?? null });
}

/**
 * What a `threadId:toolCallId` key is bound to: the session, the principal and the request's CAS ref
 * (source, tool and arguments as given, the object the broker stores as `requestRef`). `undefined` parts stand for
 * arguments that cannot be stored as JSON, as on their recorded row.
 * @param request the call
 * @returns a string equal for equal calls
 */
export function callDigest(request: InvokeRequest): string {
  let requestRef: string | undefined;
  try {
    requestRef = requestObject(request).ref;
  } catch {
    requestRef = undefined;
  }
  return digestOf(request.sessionId, request.principal, request.sourceId, request.toolId, requestRef);
}

/**
 * `callDigest` of a recorded call, from its row.
 * @param row the recorded row
 * @returns the digest its call had
 */
export function recordedDigest(row: InvocationRecord): string {
  return digestOf(row.sessionId, row.principal, row.sourceId, row.toolId, row.requestRef);
}

/** A key's binding: another principal's call under a used key is another call, however alike. */
function digestOf(
  session: string,
  principal: string | undefined,
  sourceId: string,
  toolId: string,
  requestRef: string | undefined,
): string {
  const call = [session, sourceId, toolId, requestRef ?? null];
  // Without a principal the digest is the one rows recorded before principals existed.
  return JSON.stringify(principal === undefined ? call : [...call, principal]);
}

/**
 * The error a failed invocation throws and records: the failure mapped by `toGovernanceError`, with the
 * invocation id in its data and the attempts made so far.
 * @param caught what the invocation threw
 * @param row the invocation's id and the attempts counted on its row
 * @returns the error, its message and data neutralized
 */
export function recordedError(caught: unknown, row: Pick<Row, "invocationId" | "attempts">): GovernanceError {
  const base = toGovernanceError(caught);
  // Messages and data may quote a server (its error text, a forged id): external text is data, so
  // the model and the ledger get it with reserved tags and role tokens made inert, as in results.
  return new GovernanceError(base.code, neutralizePromptTags(base.message), {
    retryable: base.retryable,
    attempts: Math.max(base.attempts, row.attempts),
    data: { ...neutralizeDeep(base.data), invocationId: row.invocationId },
    cause: base.cause ?? caught,
    ...optional({ retryAfterMs: base.retryAfterMs }),
  });
}

/**
 * The error of a call whose outcome is known but whose row could be neither committed nor spooled:
 * the caller must not take the result as recorded.
 * @param caught what recording threw
 * @param row the call's id
 * @returns the error, the invocation id in its data
 */
export function unrecordedOutcome(caught: unknown, row: Pick<Row, "invocationId">): GovernanceError {
  const base = toGovernanceError(caught);
  return new GovernanceError(
    base.code,
    `The call ran but its ledger row could not be written, so its result is withheld: ${base.message}`,
    {
      retryable: base.retryable,
      data: { ...neutralizeDeep(base.data), invocationId: row.invocationId },
      cause: caught,
    },
  );
}
