import { randomUUID } from "node:crypto";
import { type McpToolResult, toGovernanceError } from "../../contract/index.js";
import {
  atExit,
  type Clock,
  GovernanceError,
  type GovernanceErrorBody,
  hashCanonical,
  InflightCalls,
  optional,
  type Span,
  systemClock,
  withActiveSpan,
} from "../../core/index.js";
import type { ToolServerPool } from "../../mcp/index.js";
import {
  type ContentObject,
  type ContentStore,
  type InvocationRecord,
  jsonObject,
  jsonObjectAsIs,
  type Ledger,
  putObjectIn,
  withLedgerObjects,
} from "../audit/index.js";
import { type CatalogTool, InputValidator, type SourceCatalog } from "../catalog/index.js";
import { neutralizeDeep, neutralizePromptTags, normalizeToolResult } from "../envelope/index.js";
import type { SourceManifest } from "../manifests/index.js";
import type { AuthorizationDecision, Authorize } from "../permissions/index.js";
import { SessionSettings } from "../permissions/index.js";
import type { RateLimitAdmission } from "../rate-limit/index.js";
import type { InvokeOutcome, InvokeRequest, RefusedCall, UpstreamQuestion } from "./broker-types.js";
import { callUpstream, type UpstreamCall as UpstreamCallParts, upstreamTimeoutMs } from "./call-upstream.js";
import { endInvocationSpan, startInvocationSpan } from "./invocation-span.js";
import { checkingDepth } from "./refuse-too-deep.js";
import { cacheTtlSeconds, ResultCache } from "./result-cache.js";
import {
  type Continuation,
  isUpstreamPause,
  UpstreamInputs,
  type UpstreamSampler,
} from "./upstream-input.js";

/** Options of `Broker`. Every store and time source is injectable. */
export interface BrokerOptions {
  catalog: SourceCatalog;
  pool: ToolServerPool;
  ledger: Ledger;
  store: ContentStore;
  /** Limits per `rateLimitGroup`. @default no limits */
  limiter?: RateLimitAdmission;
  /** @default a 64 MiB in-memory cache */
  cache?: ResultCache;
  /** Per-session source switches. @default manifest `enabledByDefault` */
  sessions?: SessionSettings;
  /** The permission hook. @default allow every call */
  authorize?: Authorize;
  /**
   * Origins (scheme + host + port) whose URLs a source's records may cite besides HTTPS on its
   * `networkHosts`: a private source on the local network, such as an LLM Wiki at its configured
   * origin. @default none
   */
  allowedOrigins?: (source: SourceManifest) => readonly string[];
  /** Deadline of a call when neither the server's configuration nor the tool manifest sets one. @default 60000 */
  defaultTimeoutMs?: number;
  /**
   * The configured deadline of a server's calls in ms (`tool_call_timeout` in `extensions_config.json`).
   * It wins over the tool manifest's `timeoutMs`; a request's own `timeoutMs` wins over both.
   * @default none for every server
   */
  serverTimeoutMs?: (serverId: string) => number | undefined;
  /** @default systemClock */
  clock?: Clock;
  /** Jitter source for retries. @default Math.random */
  random?: () => number;
  /** Invocation id generator. @default crypto.randomUUID */
  newId?: () => string;
  /**
   * Answers upstream servers' sampling requests that the caller's relay does not (the app's model); each
   * answer is recorded as an authorization row. @default none: sampling requests are refused
   */
  sampling?: UpstreamSampler | undefined;
  /** The session's permission epoch, stamped on the rows of upstream questions and samplings. @default 0 */
  permissionEpoch?: ((sessionId: string) => Promise<number>) | undefined;
}

/** Returned calls whose rows may still be on their way; past this, a call waits for its own row. */
const MAX_ROWS_BEHIND = 1_024;

/**
 * Beyond its deadline, how long a call that another invocation runs (see `#replayWhenRecorded`) waits
 * for that invocation to record its row.
 */
const RECORDING_GRACE_MS = 5_000;

/** Thrown inside a call whose permission hook said another invocation runs it: it records no row. */
class RunningElsewhere {
  constructor(readonly waitMs: number) {}
}

/** Failed row writes kept for `recorded`/`flush` to report; past this the oldest is dropped. */
const MAX_FAILED_ROWS_KEPT = 1_000;

/** A returned call whose row is not yet handed to the ledger. */
interface Behind {
  call: Call;
  startedMs: number;
  finishedMs: number;
  /** Settles the call's `recorded` entry: with the ledger's error, or none once committed. */
  settle: (error?: unknown) => void;
}

/** A running call under its `threadId:toolCallId`, until its row is recorded. */
interface ByCall {
  /** What the key is bound to (see `callDigest`). */
  call: string | undefined;
  promise: Promise<InvokeOutcome>;
  /** Set once the call has returned: settles when its row is recorded and the key released. */
  recording: Promise<void> | undefined;
}

type Row = Omit<InvocationRecord, "status" | "finishedAt" | "durationMs">;

/** One invocation in progress: its row and the objects to commit with it. */
interface Call {
  row: Row;
  /** Objects the ledger keeps inline, written in the row's transaction. */
  inline: ContentObject[];
  /**
   * What the row stores once the call has returned (see `#recordBehind`): the server's raw result, and
   * the normalized one handed back, as a value or (cached results) as its object already.
   */
  results?: { raw?: unknown; normalized: McpToolResult | ContentObject } | undefined;
  /** The validated arguments, hashed onto the row (`inputHash`) when it is written. */
  input?: Record<string, unknown> | undefined;
  /** Whether the call's span records: its rate-limit wait and attempts are then spans too. */
  traced: boolean;
  /** The commit of the call's authorization row when the permission hook did not wait for it. */
  authorizationCommitted?: Promise<void> | undefined;
}

/**
 * The one governed path to MCP servers. `invoke` runs, in order: enablement, input validation,
 * permission, cache, rate-limit admission, the MCP call (deadline, retries, size cap), envelope
 * checks, CAS writes and one ledger row for every outcome. `close()` stops admitting calls and
 * waits for (or cancels) the running ones, so that each writes its row before the stores close.
 */
export class Broker {
  readonly #o: Required<Omit<BrokerOptions, "limiter" | "sampling" | "permissionEpoch">> & {
    limiter: RateLimitAdmission | undefined;
  };
  readonly #upstream: UpstreamInputs;
  readonly #validator = new InputValidator();
  /** Running calls by `threadId:toolCallId`: a concurrent twin of the same call shares it. */
  readonly #byCall = new Map<string, ByCall>();
  readonly #running: InflightCalls;
  /** Reads objects wherever the ledger or the store keeps them. */
  readonly #objects: ContentStore;
  /** Objects up to this size go inline with the row; undefined when the ledger keeps none. */
  readonly #maxInlineBytes: number | undefined;
  /** Settles once the rows of the calls that returned so far have been handed to the ledger. */
  #inOrder: Promise<unknown> = Promise.resolve();
  /** Returned calls whose rows are not yet handed to the ledger, oldest first (see `#drain`, `#recordBehindNow`). */
  readonly #behind: Behind[] = [];
  #drainScheduled = false;
  readonly #recordAtExit = () => this.#recordBehindNow();
  /** Removes the exit step while no row is behind (see `atExit`). */
  #stopRecordAtExit: (() => void) | undefined;
  /** Rows of returned calls still being committed, by invocation id (see `recorded`). */
  readonly #queuedRows = new Map<string, Promise<void>>();
  /** Rows of returned calls that could not be written, until `recorded` or `flush` reports them. */
  readonly #failedRows = new Map<string, unknown>();

  constructor(options: BrokerOptions) {
    this.#o = {
      cache: new ResultCache(options.clock ? { clock: options.clock } : {}),
      sessions: new SessionSettings(),
      authorize: () => ({ allowed: true }),
      allowedOrigins: () => [],
      defaultTimeoutMs: 60_000,
      serverTimeoutMs: () => undefined,
      clock: systemClock,
      random: Math.random,
      newId: randomUUID,
      ...options,
      limiter: options.limiter,
    };
    // The broker's calls remove every listener they add to their signal (retry, rate-limit queue; the
    // MCP client gets the retry run's own signal), so calls without one can share one.
    this.#running = new InflightCalls(this.#o.clock, "broker", { sharedSignal: true });
    this.#objects = withLedgerObjects(this.#o.store, this.#o.ledger);
    this.#maxInlineBytes = this.#o.ledger.objects?.maxInlineBytes;
    this.#upstream = new UpstreamInputs({
      ledger: this.#o.ledger,
      store: this.#objects,
      clock: this.#o.clock,
      newId: this.#o.newId,
      epoch: options.permissionEpoch ?? (async () => 0),
      sampler: options.sampling,
    });
  }

  /**
   * The questions an upstream server asked during a call that paused for them (`INPUT_REQUIRED`), in
   * order: a task that runs again asks a person each of them before it invokes the call with the answers.
   * @param threadId the call's thread
   * @param toolCallId the call's tool call id
   * @returns the recorded questions; empty for a call that never paused
   */
  upstreamQuestions(threadId: string, toolCallId: string): Promise<UpstreamQuestion[]> {
    return this.#upstream.questions(threadId, toolCallId);
  }

  /**
   * The store through which to read this broker's objects: the ledger's inline objects and the
   * content store (see `withLedgerObjects`).
   */
  get store(): ContentStore {
    return this.#objects;
  }

  /** The session switches this broker enforces. */
  get sessions(): SessionSettings {
    return this.#o.sessions;
  }

  /**
   * Runs one governed tool call.
   * @param request source, tool, arguments, session and optional idempotency key and signal
   * @returns the normalized result with its invocation id
   * @throws GovernanceError with any code of the documented union; every outcome of a started call is
   *   in the ledger. After `close()` began: `CANCELLED` with `data.reason: "closed"`, and no row, since
   *   the call never started (nothing was validated, authorized or sent)
   */
  invoke(request: InvokeRequest): Promise<InvokeOutcome> {
    if (request.threadId === undefined || request.toolCallId === undefined) return this.#admit(request);
    const key = `${request.threadId}:${request.toolCallId}`;
    const call = callDigest(request);
    const running = this.#byCall.get(key);
    if (running) {
      if (running.call !== call)
        return this.#running.run(
          () => this.#refuseReusedCall(request, startInvocationSpan()),
          request.signal,
        );
      // Returned already: once its row is recorded, this twin replays it from the ledger.
      if (running.recording) return running.recording.then(() => this.invoke(request));
      return running.promise;
    }
    const promise = this.#admit(request);
    // The key stays taken until the call's row is recorded, so that a twin never runs it again.
    const entry: ByCall = { call, promise, recording: undefined };
    const release = () => {
      this.#byCall.delete(key);
    };
    promise.then((outcome) => {
      entry.recording = this.recorded(outcome.invocationId).then(release, release);
    }, release);
    this.#byCall.set(key, entry);
    return promise;
  }

  /**
   * Audits a call refused before it reached `invoke` (an unknown or not yet promoted tool, an approval
   * step that said no), so that the ledger explains every tool message the model saw: one error row
   * with the refusal's code and message. A call that already has a row under its `threadId:toolCallId`
   * (a task running again after a resume) is not recorded twice. After `close()` nothing is recorded.
   * @param call where the refused call came from, and its arguments
   * @param refusal the error body the model was given
   * @returns once the row is written
   */
  async recordRefusal(call: RefusedCall, refusal: GovernanceErrorBody): Promise<void> {
    const record = async () => {
      const { ledger, clock } = this.#o;
      if (call.threadId !== undefined && call.toolCallId !== undefined) {
        if (await ledger.findByCall(call.threadId, call.toolCallId)) return;
      }
      const startedMs = clock.now();
      const refused: Call = {
        row: {
          ...this.#newRow({ ...call, input: call.input }, startedMs),
          ...optional({ toolCallId: call.toolCallId }),
        },
        inline: [],
        traced: false,
      };
      // Arguments that cannot be stored as JSON are left out; the refusal is still recorded.
      await Promise.resolve()
        .then(() => this.#stage(refused, requestObject(call)))
        .then((ref) => {
          refused.row.requestRef = ref;
        })
        .catch(() => undefined);
      refused.row.error = {
        code: refusal.code,
        message: neutralizePromptTags(refusal.message),
        retryable: refusal.retryable,
        attempts: 0,
      };
      await this.#inOrder;
      await this.#append(refused, "error", startedMs);
    };
    await this.#running.run(record).catch((error: unknown) => {
      if (!(error instanceof GovernanceError && error.code === "CANCELLED")) throw error;
    });
  }

  /**
   * Waits for the row of a call `invoke` returned. `invoke` hands back a result once its row is queued
   * in the ledger; the row commits on the event loop's next turn, in one transaction with every row
   * queued in the same turn. Code that makes a result durable elsewhere (a checkpoint, a file, a reply
   * to another process) awaits this first, as the governed executors do: a crash then never leaves a
   * kept result without its row.
   * @param invocationId the outcome's `invocationId`
   * @returns once the row is committed (at once for a row committed earlier, or for an unknown id)
   * @throws the ledger's error when the row could not be written (the result was then not cached)
   */
  recorded(invocationId: string): Promise<void> {
    const failed = this.#failedRows.get(invocationId);
    if (failed !== undefined) {
      this.#failedRows.delete(invocationId);
      return Promise.reject(failed);
    }
    const queued = this.#queuedRows.get(invocationId);
    if (queued === undefined) return Promise.resolve();
    return queued.catch((error: unknown) => {
      this.#failedRows.delete(invocationId);
      throw error;
    });
  }

  /**
   * Waits until the row of every call `invoke` has returned so far is committed (or has failed).
   * @throws the first error among rows that could not be written (the others are reported no more)
   */
  async flush(): Promise<void> {
    // Every row settles before flush does, even after one has failed; each failure is reported once.
    const settled = await Promise.allSettled([...this.#queuedRows.keys()].map((id) => this.recorded(id)));
    const failed = settled.find((outcome) => outcome.status === "rejected");
    if (failed !== undefined) throw failed.reason;
    const [first] = this.#failedRows;
    if (first !== undefined) {
      this.#failedRows.delete(first[0]);
      throw first[1];
    }
  }

  /**
   * Stops admitting calls and lets the running ones finish; those still running after `graceMs` are
   * cancelled (`CANCELLED`, the MCP request is cancelled too). Each started call still writes its one
   * ledger row. The pool and the stores are not closed: they belong to whoever created them, who
   * closes them once this settles. Idempotent.
   * @param graceMs how long running calls may take to finish on their own @default 5000
   * @returns once every started call has settled and written its row
   */
  async close(graceMs?: number): Promise<void> {
    await this.#running.close(graceMs);
    await Promise.allSettled(this.#queuedRows.values());
  }

  #admit(request: InvokeRequest): Promise<InvokeOutcome> {
    return this.#running.run((signal) => this.#invokeOnce({ ...request, signal }), request.signal);
  }

  async #invokeOnce(request: InvokeRequest): Promise<InvokeOutcome> {
    const { ledger, clock } = this.#o;
    // Under the active span (a graph run's, an executor's); ended once the outcome is known.
    const span = startInvocationSpan();
    if (request.threadId !== undefined && request.toolCallId !== undefined) {
      let prior: InvocationRecord | undefined;
      try {
        prior = await ledger.findByCall(request.threadId, request.toolCallId);
      } catch (error) {
        endInvocationSpan(span, undefined, false, error);
        throw error;
      }
      if (prior && recordedDigest(prior) !== callDigest(request))
        return this.#refuseReusedCall(request, span);
      if (prior) return this.#replay(prior, span);
    }
    const startedMs = clock.now();
    const traced = span.isRecording();
    const call: Call = {
      row: {
        ...this.#newRow(request, startedMs),
        ...optional({ toolCallId: request.toolCallId, catalogRevision: this.#o.catalog.revision }),
      },
      inline: [],
      traced,
    };
    const { row } = call;
    try {
      // Inside the try: arguments that cannot be stored as JSON (a BigInt, a cycle) are INVALID_INPUT
      // from serializing them, and that refusal is audited like every other one.
      const requestRef = this.#stage(call, requestObject(request));
      row.requestRef = typeof requestRef === "string" ? requestRef : await requestRef;
      // With the span active, the rate-limit wait and the attempts are its children.
      const outcome = await (traced
        ? withActiveSpan(span, this.#run, this, request, call)
        : this.#run(request, call));
      const recorded = this.#recordBehind(call, startedMs);
      endInvocationSpan(span, row, false);
      // A caller that never yields to the event loop (a loop of cache hits) would let the rows it
      // has not waited for pile up: past a bound, a call waits for its own.
      if (this.#queuedRows.size > MAX_ROWS_BEHIND) await recorded.catch(() => undefined);
      return outcome;
    } catch (caught) {
      if (caught instanceof RunningElsewhere) return this.#replayWhenRecorded(request, span, caught.waitMs);
      // Paused for a person's answer: the question's row records this attempt; the call's own row comes
      // with the invocation that finishes it.
      if (isUpstreamPause(caught)) {
        endInvocationSpan(span, undefined, false, caught);
        throw caught;
      }
      const error = recordedError(caught, row);
      row.error = {
        code: error.code,
        message: error.message,
        retryable: error.retryable,
        attempts: row.attempts,
        ...optional({ retryAfterMs: error.retryAfterMs }),
      };
      const finishedMs = this.#o.clock.now();
      endInvocationSpan(span, row, false, error);
      await this.#inOrder;
      await this.#append(call, "error", startedMs, finishedMs);
      throw error;
    }
  }

  async #run(request: InvokeRequest, call: Call): Promise<InvokeOutcome> {
    const { row } = call;
    const { source, tool } = this.#resolve(request);
    row.mcpToolName = tool.manifest.mcpToolName;
    row.toolDefinitionHash = tool.definitionHash;
    row.license = source.governance.license;
    const label = `${source.id}/${tool.toolId}`;
    const input = this.#validator.parse(tool.manifest.inputSchema, request.input ?? {}, label);
    call.input = input;

    // A call continued with a person's answers runs on the authorization of the invocation that asked.
    const continuation = await this.#upstream.claim({
      request,
      sourceId: source.id,
      toolId: tool.toolId,
      input,
    });
    if (continuation !== undefined && "runningElsewhere" in continuation) {
      throw new RunningElsewhere(upstreamTimeoutMs(request, tool, this.#o) + RECORDING_GRACE_MS);
    }
    const decision: AuthorizationDecision = continuation
      ? { allowed: true, ...optional({ authorizationId: continuation.authorizationId }) }
      : await this.#authorize(request, source, tool, input);
    if (decision.authorizationId !== undefined) row.authorizationId = decision.authorizationId;
    if (decision.allowed && decision.committed) {
      // Awaited when the row is written; a failure surfaces there, never as an unhandled rejection.
      decision.committed.catch(() => undefined);
      call.authorizationCommitted = decision.committed;
    }
    // Only a call with a thread has a row to replay; one without is refused below.
    if (!decision.allowed && decision.runningElsewhere === true && request.threadId !== undefined) {
      throw new RunningElsewhere(upstreamTimeoutMs(request, tool, this.#o) + RECORDING_GRACE_MS);
    }
    if (!decision.allowed) {
      throw new GovernanceError(
        "PERMISSION_DENIED",
        `Call to ${label} was not authorized: ${decision.reason}`,
        {
          data: { reason: decision.reason },
        },
      );
    }

    const cacheTtl = cacheTtlSeconds(source, tool.manifest);
    const cacheKey =
      cacheTtl > 0
        ? ResultCache.key({ sourceId: source.id, toolId: tool.toolId, version: source.version, input })
        : "";
    const hit = cacheKey ? this.#o.cache.get(cacheKey) : undefined;
    if (hit) {
      row.cacheHit = true;
      // The hit's row stores the object again (kept once), so that it never depends on another row.
      call.results = { normalized: hit.normalized };
      return this.#outcome(row, hit.result, false);
    }

    const upstream = this.#upstreamOf(
      request,
      source.id,
      tool.toolId,
      input,
      row.authorizationId,
      continuation,
    );
    const raw = await callUpstream(
      { request, source, tool, input, tally: row, traced: call.traced, ...upstream },
      this.#o,
    );
    const result = checkingDepth(() =>
      normalizeToolResult(raw, {
        sourceId: source.id,
        toolId: tool.toolId,
        networkHosts: source.governance.networkHosts,
        license: source.governance.license,
        attribution: source.governance.attribution,
        now: new Date(this.#o.clock.now()),
        allowedOrigins: this.#o.allowedOrigins(source),
      }),
    );
    if (cacheKey) {
      // A cached result's object is made now, so that the next call can be a hit at once.
      const normalized = jsonObjectAsIs(result);
      this.#o.cache.set(cacheKey, { result, normalized }, cacheTtl);
      call.results = { raw, normalized };
    } else call.results = { raw, normalized: result };
    return this.#outcome(row, result, false);
  }

  /** Asks the permission hook about a call (a throwing hook refuses it). */
  #authorize(
    request: InvokeRequest,
    source: SourceManifest,
    tool: CatalogTool,
    input: Record<string, unknown>,
  ): Promise<AuthorizationDecision> {
    return Promise.resolve()
      .then(() =>
        this.#o.authorize({
          sessionId: request.session,
          sourceId: source.id,
          toolId: tool.toolId,
          source,
          tool: tool.manifest,
          definitionHash: tool.definitionHash,
          input,
          ...optional({ threadId: request.threadId, toolCallId: request.toolCallId }),
        }),
      )
      .catch((error: unknown): AuthorizationDecision => ({ allowed: false, reason: errorMessage(error) }));
  }

  /** What the pool needs for a call's upstream requests: the relay, and the round a continuation resumes. */
  #upstreamOf(
    request: InvokeRequest,
    sourceId: string,
    toolId: string,
    input: Record<string, unknown>,
    authorizationId: string | undefined,
    continuation: Continuation | undefined,
  ): Pick<UpstreamCallParts, "relay" | "continueFrom"> {
    const relay = this.#upstream.relayFor(
      { request, sourceId, toolId, input, authorizationId },
      continuation,
    );
    return { relay, continueFrom: continuation?.continueFrom };
  }

  #resolve(request: InvokeRequest): { source: SourceManifest; tool: CatalogTool } {
    const entry = this.#o.catalog.source(request.sourceId);
    if (!entry) {
      const known = this.#o.catalog
        .sources()
        .map((s) => s.id)
        .join(", ");
      throw new GovernanceError(
        "TOOL_UNAVAILABLE",
        `Unknown source '${request.sourceId}'. Known sources: ${known || "(none)"}.`,
      );
    }
    if (entry.status === "disabled") {
      throw new GovernanceError(
        "SOURCE_DISABLED",
        `Source '${entry.id}' is disabled: ${entry.reason ?? "by config"}.`,
      );
    }
    if (!this.#o.sessions.isSourceEnabled(request.session, entry.manifest)) {
      throw new GovernanceError(
        "SOURCE_DISABLED",
        `Source '${entry.id}' is not enabled for session '${request.session}'. Enable it for the session first.`,
      );
    }
    return { source: entry.manifest, tool: this.#o.catalog.requireTool(entry.id, request.toolId) };
  }

  #outcome(row: Row, result: McpToolResult, replayed: boolean): InvokeOutcome {
    return {
      invocationId: row.invocationId,
      result,
      cacheHit: row.cacheHit,
      replayed,
      attempts: row.attempts,
      queueWaitMs: row.queueWaitMs,
    };
  }

  /**
   * Replays a call that another invocation under the same `threadId:toolCallId` runs (another
   * replica's, which consumed the human's decision first) once its row is recorded, polling the ledger
   * within `waitMs`. This invocation records no row: the key's row is the other one's to write.
   * @throws GovernanceError `TIMEOUT` (retryable) when no row came within `waitMs`; `CANCELLED` when
   *   the caller aborted or `close()` cut the wait
   */
  async #replayWhenRecorded(request: InvokeRequest, span: Span, waitMs: number): Promise<InvokeOutcome> {
    const { ledger, clock } = this.#o;
    const threadId = request.threadId as string;
    const toolCallId = request.toolCallId as string;
    const until = clock.now() + waitMs;
    let prior: InvocationRecord | undefined;
    try {
      for (let pause = 25; prior === undefined; pause = Math.min(pause * 2, 500)) {
        prior = await ledger.findByCall(threadId, toolCallId);
        const left = until - clock.now();
        if (prior !== undefined) break;
        if (left <= 0) {
          throw new GovernanceError(
            "TIMEOUT",
            `Tool call '${toolCallId}' of thread '${threadId}' was approved and runs in another invocation (another replica consumed its decision first), which recorded no outcome within ${waitMs} ms; nothing was run here. Try again to replay its outcome once it is recorded.`,
            { retryable: true, data: { threadId, toolCallId, runningElsewhere: true } },
          );
        }
        await clock.sleep(Math.min(pause, left), request.signal);
      }
    } catch (caught) {
      const error = toGovernanceError(caught);
      endInvocationSpan(span, undefined, false, error);
      throw error;
    }
    if (recordedDigest(prior) !== callDigest(request)) return this.#refuseReusedCall(request, span);
    return this.#replay(prior, span);
  }

  async #replay(prior: InvocationRecord, span: Span): Promise<InvokeOutcome> {
    try {
      const outcome = await this.#replayed(prior);
      endInvocationSpan(span, prior, true);
      return outcome;
    } catch (error) {
      endInvocationSpan(span, prior, true, error);
      throw error;
    }
  }

  async #replayed(prior: InvocationRecord): Promise<InvokeOutcome> {
    if (prior.status === "error" || prior.normalizedRef === undefined) {
      const e = prior.error;
      throw new GovernanceError(
        (e?.code ?? "UPSTREAM_UNAVAILABLE") as GovernanceError["code"],
        e?.message ?? "The recorded call failed.",
        {
          retryable: e?.retryable ?? false,
          attempts: e?.attempts ?? prior.attempts,
          data: { invocationId: prior.invocationId, replayed: true },
          ...optional({ retryAfterMs: e?.retryAfterMs }),
        },
      );
    }
    const result = await this.#objects.getJson<McpToolResult>(prior.normalizedRef);
    return this.#outcome(prior, result, true);
  }

  /** A new invocation row of a call, without its tool call id (the caller adds it where the key is its own). */
  #newRow(request: InvokeRequest, startedMs: number): Row {
    return {
      invocationId: this.#o.newId(),
      sessionId: request.session,
      sourceId: request.sourceId,
      toolId: request.toolId,
      startedAt: new Date(startedMs).toISOString(),
      attempts: 0,
      cacheHit: false,
      queueWaitMs: 0,
      ...optional({ threadId: request.threadId, runId: request.runId }),
    };
  }

  /**
   * Refuses a call whose `threadId:toolCallId` already names another call (another session, source,
   * tool or arguments), so that one session cannot read or join another's call by its key. The
   * refusal is audited on a row of its own without the tool call id (the key belongs to the first
   * call); the message names the clashing key. The first call's invocation id is not disclosed.
   */
  async #refuseReusedCall(request: InvokeRequest, span: Span): Promise<never> {
    const startedMs = this.#o.clock.now();
    const row: Row = this.#newRow(request, startedMs);
    const error = new GovernanceError(
      "PERMISSION_DENIED",
      neutralizePromptTags(
        `Tool call id '${request.toolCallId}' of thread '${request.threadId}' was already used for a different call (another session, source, tool or arguments); a replay must repeat the same call. Use a new tool call id.`,
      ),
      {
        data: neutralizeDeep({
          reason: "tool_call_id_reused",
          threadId: request.threadId,
          toolCallId: request.toolCallId,
          invocationId: row.invocationId,
        }),
      },
    );
    row.error = { code: error.code, message: error.message, retryable: false, attempts: 0 };
    endInvocationSpan(span, row, false, error);
    await this.#inOrder;
    await this.#append({ row, inline: [], traced: false }, "error", startedMs);
    throw error;
  }

  /**
   * Keeps an object for the call's row: a small one goes into the row's transaction, a larger one (or
   * any, when the ledger keeps none) is written to the content store now, before the row names it.
   * @returns the object's ref, at once for an object kept inline
   */
  #stage(call: Call, object: ContentObject): string | Promise<string> {
    if (this.#maxInlineBytes !== undefined && object.size <= this.#maxInlineBytes) {
      call.inline.push(object);
      return object.ref;
    }
    return putObjectIn(this.#o.store, object).then(() => object.ref);
  }

  /**
   * Records a call that succeeded after it has returned (see `recorded`): on the event loop's next turn,
   * its raw and normalized results become content objects (the large ones written to the content store
   * first) and its row is handed to the ledger, in the order calls ended (`#drain`). A row that fails is
   * kept for `recorded` and `flush` to report.
   * @returns settles when the row is committed (rejects with the ledger's error)
   */
  #recordBehind(call: Call, startedMs: number): Promise<void> {
    let settle: (error?: unknown) => void = () => undefined;
    const entry = new Promise<void>((resolve, reject) => {
      settle = (error) => (error === undefined ? resolve() : reject(error));
    });
    // Unobserved, a failure stays in #failedRows for recorded() and flush() to report.
    entry.catch(() => undefined);
    this.#queuedRows.set(call.row.invocationId, entry);
    this.#behind.push({ call, startedMs, finishedMs: this.#o.clock.now(), settle });
    // At exit, rows still behind are handed over before the ledgers commit their queues.
    if (this.#behind.length === 1) this.#stopRecordAtExit ??= atExit("hand-over", this.#recordAtExit);
    if (!this.#drainScheduled) {
      this.#drainScheduled = true;
      const previous = this.#inOrder;
      this.#inOrder = new Promise<void>((resolve) =>
        setImmediate(() => {
          this.#drainScheduled = false;
          resolve(previous.then(() => this.#drain()));
        }),
      );
    }
    return entry;
  }

  /** Hands the rows behind to the ledger, oldest first; each settles its entry once committed. */
  async #drain(): Promise<void> {
    for (let behind = this.#behind[0]; behind !== undefined; behind = this.#behind[0]) {
      try {
        const writing = this.#stageResults(behind.call);
        if (writing) await writing;
      } catch (error) {
        if (this.#behind[0] === behind) this.#behind.shift();
        this.#settleRow(behind, error);
        continue;
      }
      // Handed over at exit while its objects were being written: nothing more to do here.
      if (this.#behind[0] !== behind) continue;
      this.#behind.shift();
      const row = behind;
      this.#append(row.call, "ok", row.startedMs, row.finishedMs).then(
        () => this.#settleRow(row),
        (error: unknown) => this.#settleRow(row, error),
      );
    }
    if (this.#behind.length === 0) this.#noRowsBehind();
  }

  #noRowsBehind(): void {
    this.#stopRecordAtExit?.();
    this.#stopRecordAtExit = undefined;
  }

  #settleRow(behind: Behind, error?: unknown): void {
    const id = behind.call.row.invocationId;
    this.#queuedRows.delete(id);
    if (error !== undefined) {
      if (this.#failedRows.size >= MAX_FAILED_ROWS_KEPT) {
        const [oldest] = this.#failedRows.keys();
        if (oldest !== undefined) this.#failedRows.delete(oldest);
      }
      this.#failedRows.set(id, error);
    }
    behind.settle(error);
  }

  /**
   * At process exit (no later turn will come): hands every row still behind to the ledger at once,
   * whose own exit step then commits it. Objects are made here; a row with an object too large for the
   * ledger (which only the content store, asynchronously, could take) cannot be, and is reported lost.
   */
  #recordBehindNow(): void {
    let lost = 0;
    for (const behind of this.#behind.splice(0)) {
      const { call, startedMs, finishedMs } = behind;
      try {
        const [raw, normalized] = this.#resultObjects(call);
        const max = this.#maxInlineBytes;
        if (max === undefined || [raw, normalized].some((o) => o !== undefined && o.size > max)) {
          lost++;
          continue;
        }
        if (raw) {
          call.inline.push(raw);
          call.row.rawRef = raw.ref;
        }
        if (normalized) {
          call.inline.push(normalized);
          call.row.normalizedRef = normalized.ref;
        }
        this.#append(call, "ok", startedMs, finishedMs).catch(() => undefined);
      } catch {
        lost++;
      }
    }
    this.#noRowsBehind();
    if (lost > 0) {
      process.stderr.write(
        `sciencegate: ${lost} audit row(s) not written: the process exited before broker.flush() or close(), with objects only the content store could take.\n`,
      );
    }
  }

  /** A call's raw and normalized results as content objects (raw undefined when there is none or it cannot be serialized). */
  #resultObjects(call: Call): [ContentObject | undefined, ContentObject | undefined] {
    const { results } = call;
    if (results === undefined) return [undefined, undefined];
    let raw: ContentObject | undefined;
    if ("raw" in results) {
      try {
        raw = checkingDepth(() => jsonObjectAsIs(results.raw));
      } catch {
        raw = undefined;
      }
    }
    const { normalized } = results;
    return [raw, isContentObject(normalized) ? normalized : jsonObjectAsIs(normalized)];
  }

  /** The content objects of a call's results on its row (large ones written to the content store first). */
  #stageResults(call: Call): Promise<void> | undefined {
    // The normalized result walked the same value within the depth limit; a raw result that still
    // cannot be serialized is left without its object rather than losing the row.
    const [raw, normalized] = this.#resultObjects(call);
    const writes: Promise<unknown>[] = [];
    for (const object of [raw, normalized]) {
      const staged = object === undefined ? undefined : this.#stage(call, object);
      if (staged instanceof Promise) writes.push(staged);
    }
    if (raw) call.row.rawRef = raw.ref;
    if (normalized) call.row.normalizedRef = normalized.ref;
    // Large objects are written before the row that names them.
    return writes.length === 0 ? undefined : Promise.all(writes).then(() => undefined);
  }

  async #append(
    call: Call,
    status: "ok" | "error",
    startedMs: number,
    finishedMs = this.#o.clock.now(),
  ): Promise<void> {
    if (call.input !== undefined) call.row.inputHash ??= hashCanonical(call.input);
    const record: InvocationRecord = {
      ...call.row,
      status,
      finishedAt: new Date(finishedMs).toISOString(),
      durationMs: Math.max(0, finishedMs - startedMs),
    };
    const appended =
      call.inline.length === 0 ? this.#o.ledger.append(record) : this.#o.ledger.append(record, call.inline);
    // The row is recorded once the authorization row it names is committed too.
    if (call.authorizationCommitted) await Promise.all([appended, call.authorizationCommitted]);
    else await appended;
  }
}

function isContentObject(value: McpToolResult | ContentObject): value is ContentObject {
  return "bytes" in value && value.bytes instanceof Uint8Array;
}

/** The request object of a call: source, tool and the arguments as given (its ref is `requestRef`). */
function requestObject(request: Pick<InvokeRequest, "sourceId" | "toolId" | "input">): ContentObject {
  return jsonObject({ sourceId: request.sourceId, toolId: request.toolId, input: request.input ?? null });
}

/**
 * The error a failed invocation throws and records: the failure mapped by `toGovernanceError`, with the
 * invocation id in its data and the attempts made so far.
 * @param caught what the invocation threw
 * @param row the invocation's id and the attempts counted on its row
 * @returns the error, its message and data neutralized
 */
function recordedError(caught: unknown, row: Pick<Row, "invocationId" | "attempts">): GovernanceError {
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
 * What a `threadId:toolCallId` key is bound to: the session and the request's CAS ref (source, tool and
 * arguments as given, the object the broker stores as `requestRef`). `undefined` parts stand for
 * arguments that cannot be stored as JSON, as on their recorded row.
 */
function callDigest(request: InvokeRequest): string {
  let requestRef: string | undefined;
  try {
    requestRef = requestObject(request).ref;
  } catch {
    requestRef = undefined;
  }
  return JSON.stringify([request.session, request.sourceId, request.toolId, requestRef ?? null]);
}

/** `callDigest` of a recorded call, from its row. */
function recordedDigest(row: InvocationRecord): string {
  return JSON.stringify([row.sessionId, row.sourceId, row.toolId, row.requestRef ?? null]);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
