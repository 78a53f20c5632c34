import { randomUUID } from "node:crypto";
import { toGovernanceError } from "../../contract/index.js";
import {
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
  type ContentStore,
  type InvocationRecord,
  jsonObjectAsIs,
  type LedgerWriter,
} from "../audit/index.js";
import { type CatalogTool, InputValidator, type SourceCatalog } from "../catalog/index.js";
import { binaryPayloads, neutralizePromptTags, normalizeToolResult } from "../envelope/index.js";
import type { SourceManifest, ToolManifest } from "../manifests/index.js";
import type { AuthorizationRequest, Authorize, AuthorizeResult } from "../permissions/index.js";
import { SessionSettings } from "../permissions/index.js";
import type { QuotaAdmission, RateLimitAdmission } from "../rate-limit/index.js";
import type {
  InvokeOutcome,
  InvokeRequest,
  RecordedRead,
  RefusedCall,
  UpstreamQuestion,
} from "./broker-types.js";
import {
  authorizationHeld,
  type Call,
  CallRecorder,
  callDigest,
  type Row,
  recordedDigest,
  recordedError,
  requestObject,
  unrecordedOutcome,
} from "./call-recorder.js";
import { outcomeOf, replayedOutcome, reusedKeyError, uncheckedKeyError, waitForRow } from "./call-replay.js";
import { callUpstream, type UpstreamCall as UpstreamCallParts, upstreamTimeoutMs } from "./call-upstream.js";
import type { InProcessCall, InProcessSource, PreparedCall } from "./in-process-source.js";
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
  /** The ledger's one writer: every outcome's row goes through it (and its reads serve replays). */
  ledgerWriter: LedgerWriter;
  /** Where objects too large to keep inline with their row go. */
  store: ContentStore;
  /** Limits per `rateLimitGroup`. @default no limits */
  limiter?: RateLimitAdmission;
  /**
   * Quotas per principal, per tool or source (`QuotaLimiter`): every authorized call counts, a cache
   * hit too; a call past its quota is `QUOTA_EXCEEDED` and sends nothing. @default no quotas
   */
  quotas?: QuotaAdmission | undefined;
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
  /**
   * Sources served in this process (the built-in `paper_extract_pdf`), resolved before the catalog:
   * their calls take this same path, with their own preparation before the permission step and their
   * own run in place of the MCP request. @default none
   */
  inProcess?: readonly InProcessSource[] | undefined;
}

/**
 * Beyond its deadline, how long a call that another invocation runs (see `#replayWhenRecorded`) waits
 * for that invocation to record its row.
 */
const RECORDING_GRACE_MS = 5_000;

/** Thrown inside a call whose permission hook said another invocation runs it: it records no row. */
class RunningElsewhere {
  constructor(readonly waitMs: number) {}
}

/** The tool a call resolved to: a catalog tool behind an MCP server, or an in-process source's. */
interface ResolvedTool {
  source: SourceManifest;
  toolId: string;
  manifest: ToolManifest;
  definitionHash: string;
  /** The catalog tool of an MCP call. */
  upstream?: CatalogTool | undefined;
  /** The source of an in-process call. */
  local?: InProcessSource | undefined;
}

/** A running call under its `threadId:toolCallId`, until its row is recorded. */
interface ByCall {
  /** What the key is bound to (see `callDigest`). */
  call: string;
  promise: Promise<InvokeOutcome>;
}

/**
 * The one governed path to MCP servers. `invoke` runs, in order: enablement, input validation,
 * permission, quota, cache, rate-limit admission, the MCP call (deadline, retries, size cap), envelope
 * checks, CAS writes and one ledger row for every outcome. `close()` stops admitting calls and
 * waits for (or cancels) the running ones, so that each writes its row before the stores close.
 */
export class Broker {
  readonly #o: Required<
    Omit<BrokerOptions, "limiter" | "quotas" | "sampling" | "permissionEpoch" | "inProcess">
  > & {
    limiter: RateLimitAdmission | undefined;
    quotas: QuotaAdmission | undefined;
  };
  readonly #upstream: UpstreamInputs;
  /** In-process sources by id, with their tools' definition hashes. */
  readonly #inProcess = new Map<string, { source: InProcessSource; hashes: Map<string, string> }>();
  readonly #validator = new InputValidator();
  /** Running calls by `threadId:toolCallId`: a concurrent twin of the same call shares it. */
  readonly #byCall = new Map<string, ByCall>();
  readonly #running: InflightCalls;
  readonly #recorder: CallRecorder;

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
      quotas: options.quotas,
    };
    for (const source of options.inProcess ?? []) {
      const hashes = new Map(
        source.manifest.tools.map((tool) => [
          tool.id,
          hashCanonical({ inProcess: source.manifest.id, tool }),
        ]),
      );
      this.#inProcess.set(source.manifest.id, { source, hashes });
    }
    // The broker's calls remove every listener they add to their signal (retry, rate-limit queue; the
    // MCP client gets the retry run's own signal), so calls without one can share one.
    this.#running = new InflightCalls(this.#o.clock, "broker", { sharedSignal: true });
    this.#recorder = new CallRecorder(this.#o.ledgerWriter, this.#o.store, this.#o.clock, this.#o.newId);
    for (const source of options.inProcess ?? []) source.attach?.(this);
    this.#upstream = new UpstreamInputs({
      ledger: this.#o.ledgerWriter,
      store: this.#recorder.objects,
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
    return this.#recorder.objects;
  }

  /** The session switches this broker enforces. */
  get sessions(): SessionSettings {
    return this.#o.sessions;
  }

  /**
   * Runs one governed tool call, and returns (or throws) only once the call's one ledger row is
   * durable: committed, or kept in the ledger's spool when the store stayed unreachable (see
   * `LedgerWriter`). Code that reads the ledger after `invoke` settles finds the row.
   * @param request source, tool, arguments, session and optional idempotency key and signal
   * @returns the normalized result with its invocation id
   * @throws GovernanceError with any code of the documented union; every outcome of a started call is
   *   in the ledger. After `close()` began: `CANCELLED` with `data.reason: "closed"`, and no row, since
   *   the call never started (nothing was validated, authorized or sent). `UPSTREAM_UNAVAILABLE` when
   *   the call's row could be neither committed nor spooled (`data.invocationId`; its effect, if it had
   *   one, happened)
   */
  invoke(request: InvokeRequest): Promise<InvokeOutcome> {
    if (request.threadId === undefined || request.toolCallId === undefined) return this.#admit(request);
    const key = `${request.threadId}:${request.toolCallId}`;
    const call = callDigest(request);
    const running = this.#byCall.get(key);
    if (running) {
      if (running.call !== call)
        return this.#running.run(
          () => this.#refuse(request, startInvocationSpan(), reusedKeyError),
          request.signal,
        );
      return running.promise;
    }
    const promise = this.#admit(request);
    // The key stays taken until the call's row is recorded (when `promise` settles), so that a twin
    // never runs it again: a later one replays the row.
    this.#byCall.set(key, { call, promise });
    const release = () => {
      this.#byCall.delete(key);
    };
    promise.then(release, release);
    return promise;
  }

  /**
   * Audits a call refused before it reached `invoke` (an unknown or not yet promoted tool, an approval
   * step that said no), so that the ledger explains every tool message the model saw: one error row
   * with the refusal's code and message. A call that already has a row under its `threadId:toolCallId`
   * (a task running again after a resume) is not recorded twice. After `close()` nothing is recorded.
   * @param call where the refused call came from, and its arguments
   * @param refusal the error body the model was given
   * @returns once the row is durable
   */
  async recordRefusal(call: RefusedCall, refusal: GovernanceErrorBody): Promise<void> {
    const record = async () => {
      if (call.threadId !== undefined && call.toolCallId !== undefined) {
        if (await this.#o.ledgerWriter.reader.findByCall(call.threadId, call.toolCallId)) return;
      }
      const startedMs = this.#o.clock.now();
      const refused: Call = {
        row: {
          ...this.#recorder.newRow(call, startedMs),
          ...optional({ toolCallId: call.toolCallId }),
        },
        inline: [],
        traced: false,
      };
      // Arguments that cannot be stored as JSON are left out; the refusal is still recorded.
      await Promise.resolve()
        .then(() => this.#recorder.stage(refused, requestObject(call)))
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
      await this.#recorder.record(refused, "error", startedMs);
    };
    await this.#running.run(record).catch((error: unknown) => {
      if (!(error instanceof GovernanceError && error.code === "CANCELLED")) throw error;
    });
  }

  /**
   * The permission request a call will be authorized with, built as the permission step builds it: the
   * tool resolved, the arguments validated and, for an in-process tool, the call prepared (its subject).
   * An approval step before `invoke` (a card, an elicitation) shows and records exactly the decision the
   * call then consumes. Nothing runs and nothing is recorded.
   * @param call source, tool, arguments, session and the optional principal and ids
   * @returns the request
   * @throws GovernanceError `TOOL_UNAVAILABLE`, `SOURCE_DISABLED`, `INVALID_INPUT`, or an in-process
   *   tool's refusal; `INVALID_INPUT` (`data.reason: "nothing_to_authorize"`) for a call that asks no
   *   permission: its key already has a row (it replays, or is refused), or another call holds it, or it
   *   continues an authorized call
   */
  async authorizationRequest(call: RefusedCall): Promise<AuthorizationRequest> {
    if (call.threadId !== undefined && call.toolCallId !== undefined) {
      if (await this.#o.ledgerWriter.reader.findByCall(call.threadId, call.toolCallId)) {
        throw nothingToAuthorize();
      }
    }
    const resolved = this.#resolve(call);
    const label = `${resolved.source.id}/${resolved.toolId}`;
    const input = this.#validator.parse(resolved.manifest.inputSchema, call.input ?? {}, label);
    const prepared = resolved.local
      ? await resolved.local.prepare(inProcessCallOf(call, resolved, input))
      : undefined;
    if (prepared?.keyTaken || prepared?.authorized) throw nothingToAuthorize();
    return authorizationRequestOf(call, resolved, prepared?.subject ?? input);
  }

  /**
   * Records a run of an in-process tool that no tool call asked for (an operator's retry of a download
   * job, the cancellation of a job a crashed process left) as one row of its own, through the same
   * recorder as every call: no replay key, no permission step (whoever runs it acts for the user).
   * @param call the source and tool, the arguments stored as its request, session and principal
   *   (`threadId` and `toolCallId`, when given, key its row)
   * @param prepared what runs
   * @returns the outcome, once its row is durable
   * @throws GovernanceError the run's failure, once recorded; `CANCELLED` (no row) after `close()` began
   */
  recordRun(
    call: Omit<RefusedCall, "runId">,
    prepared: Pick<PreparedCall, "run" | "license">,
  ): Promise<InvokeOutcome> {
    const request: InvokeRequest = { ...call };
    return this.#running.run((signal) => this.#invokeOnce({ ...request, signal }, prepared), request.signal);
  }

  /**
   * Records a read the broker did not send (the gateway's prompts, resources, completion and log level,
   * under their source's `surface` policy) as one row, built and written by the recorder of every call:
   * the same stamps, the same inline limit and content store for its objects, the same writer.
   * @param read the source, method, object and params read, by whom, when, and the answer or error
   * @returns once the row is durable
   * @throws what the writer throws; `CANCELLED` (no row) after `close()` began
   */
  recordRead(read: RecordedRead): Promise<void> {
    return this.#running.run(() => this.#recorder.recordRead(read));
  }

  /**
   * Stops admitting calls and lets the running ones finish; those still running after `graceMs` are
   * cancelled (`CANCELLED`, the MCP request is cancelled too). Each started call still writes its one
   * ledger row before it settles. The pool and the stores are not closed: they belong to whoever
   * created them, who closes them once this settles. Idempotent.
   * @param graceMs how long running calls may take to finish on their own @default 5000
   * @returns once every started call has settled, its row written
   */
  async close(graceMs?: number): Promise<void> {
    await this.#running.close(graceMs);
  }

  #admit(request: InvokeRequest): Promise<InvokeOutcome> {
    return this.#running.run((signal) => this.#invokeOnce({ ...request, signal }), request.signal);
  }

  async #invokeOnce(request: InvokeRequest, prepared?: PreparedCall): Promise<InvokeOutcome> {
    const { clock } = this.#o;
    // Under the active span (a graph run's, an executor's); ended once the outcome is known.
    const span = startInvocationSpan();
    if (prepared === undefined && request.threadId !== undefined && request.toolCallId !== undefined) {
      let prior: InvocationRecord | undefined;
      try {
        prior = await this.#o.ledgerWriter.reader.findByCall(request.threadId, request.toolCallId);
      } catch (error) {
        return this.#refuse(request, span, (call, invocationId) =>
          uncheckedKeyError(call, error, invocationId),
        );
      }
      if (prior && recordedDigest(prior) !== callDigest(request))
        return this.#refuse(request, span, reusedKeyError);
      if (prior) return this.#replay(prior, span);
    }
    const startedMs = clock.now();
    const traced = span.isRecording();
    const call: Call = {
      row: {
        ...this.#recorder.newRow(request, startedMs),
        ...optional({ toolCallId: request.toolCallId, catalogRevision: this.#o.catalog.revision }),
      },
      inline: [],
      traced,
      ...optional({ prepared }),
    };
    const { row } = call;
    let outcome: InvokeOutcome;
    try {
      // Inside the try: arguments that cannot be stored as JSON (a BigInt, a cycle) are INVALID_INPUT
      // from serializing them, and that refusal is audited like every other one.
      const requestRef = this.#recorder.stage(call, requestObject(request));
      row.requestRef = typeof requestRef === "string" ? requestRef : await requestRef;
      // With the span active, the rate-limit wait and the attempts are its children.
      outcome = await (traced
        ? withActiveSpan(span, this.#run, this, request, call)
        : this.#run(request, call));
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
      const finishedMs = clock.now();
      endInvocationSpan(span, row, false, error);
      await this.#recorder.record(call, "error", startedMs, finishedMs);
      throw error;
    }
    // The call returns only once its row is durable: an answered call always has its row.
    try {
      await this.#recorder.record(call, "ok", startedMs);
    } catch (caught) {
      const error = unrecordedOutcome(caught, row);
      endInvocationSpan(span, row, false, error);
      throw error;
    }
    endInvocationSpan(span, row, false);
    return outcome;
  }

  async #run(request: InvokeRequest, call: Call): Promise<InvokeOutcome> {
    const { row } = call;
    const resolved = this.#resolve(request);
    const { source } = resolved;
    row.mcpToolName = resolved.manifest.mcpToolName;
    row.toolDefinitionHash = resolved.definitionHash;
    row.license = source.governance.license;
    const label = `${source.id}/${resolved.toolId}`;
    const input = this.#validator.parse(resolved.manifest.inputSchema, request.input ?? {}, label);
    call.input = input;
    if (resolved.local) return this.#runLocal(request, call, resolved, resolved.local, input);
    const tool = resolved.upstream as CatalogTool;

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
    const decision: AuthorizeResult = continuation
      ? { allowed: true, ...optional({ authorizationId: continuation.authorizationId }) }
      : await this.#authorize(request, resolved, input);
    await this.#admitDecision(request, call, resolved, decision, upstreamTimeoutMs(request, tool, this.#o));

    const cacheTtl = cacheTtlSeconds(source, tool.manifest);
    const cacheKey =
      cacheTtl > 0
        ? ResultCache.key({ sourceId: source.id, toolId: tool.toolId, version: source.version, input })
        : "";
    const hit = cacheKey ? this.#o.cache.get(cacheKey) : undefined;
    if (hit) {
      await this.#authorizationHeld(call, resolved);
      row.cacheHit = true;
      // The hit's row stores the object again (kept once), so that it never depends on another row.
      call.results = { normalized: hit.normalized };
      return outcomeOf(row, hit.result, false);
    }

    const upstream = this.#upstreamOf(
      request,
      { sourceId: source.id, toolId: tool.toolId, input },
      call,
      continuation,
    );
    const raw = await callUpstream(
      {
        request,
        source,
        tool,
        input,
        tally: row,
        traced: call.traced,
        authorized: () => this.#authorizationHeld(call, resolved),
        ...upstream,
      },
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
    // Each image, audio or blob a server sent is kept in the content store under the hash its governed
    // block names, so a caller's media can be traced to stored bytes.
    for (const payload of binaryPayloads(result.data?.content)) {
      await this.#o.store.put(Buffer.from(payload.base64, "base64"));
    }
    if (cacheKey) {
      // A cached result's object is made now, so that the next call can be a hit at once.
      const normalized = jsonObjectAsIs(result);
      this.#o.cache.set(cacheKey, { result, normalized }, cacheTtl);
      call.results = { raw, normalized };
    } else call.results = { raw, normalized: result };
    return outcomeOf(row, result, false);
  }

  /**
   * Runs a call of an in-process tool: its source prepares it, the permission step and the quota decide
   * as for every call, and its own run stands in for the MCP request (no cache, no rate-limit lease:
   * its source bounds its own work).
   */
  async #runLocal(
    request: InvokeRequest,
    call: Call,
    tool: ResolvedTool,
    local: InProcessSource,
    input: Record<string, unknown>,
  ): Promise<InvokeOutcome> {
    const { row } = call;
    const prepared = call.prepared ?? (await local.prepare(inProcessCallOf(request, tool, input)));
    if (prepared.keyTaken) {
      // Refused on a row without the key, which stays the other call's.
      delete row.toolCallId;
      throw reusedKeyError(request, row.invocationId);
    }
    if (prepared.license !== undefined) row.license = prepared.license;
    // A run recorded for its source (`recordRun`) or the continuation of an authorized call asks nothing.
    const decision: AuthorizeResult =
      call.prepared !== undefined || prepared.authorized === true
        ? { allowed: true }
        : await this.#authorize(request, tool, prepared.subject ?? input);
    const timeoutMs = request.timeoutMs ?? tool.manifest.timeoutMs ?? this.#o.defaultTimeoutMs;
    await this.#admitDecision(request, call, tool, decision, timeoutMs);
    await this.#authorizationHeld(call, tool);
    const { onEvent } = request;
    const emit =
      onEvent &&
      ((event: Record<string, unknown>) => {
        // A listener's failure is its own: the call goes on.
        try {
          onEvent(event);
        } catch {}
      });
    // The run reports its attempts on the row itself, so that a failure records them too.
    const result = await prepared.run({
      signal: request.signal ?? NEVER_ABORTED,
      tally: row,
      invocationId: row.invocationId,
      ...optional({ emit }),
    });
    call.results = { normalized: result };
    return outcomeOf(row, result, false);
  }

  /**
   * Applies a permission decision to a call: its authorization row on the call's row, a refusal thrown
   * (or, when another invocation consumed the decision, the wait for its row), then the quota.
   */
  async #admitDecision(
    request: InvokeRequest,
    call: Call,
    tool: ResolvedTool,
    decision: AuthorizeResult,
    timeoutMs: number,
  ): Promise<void> {
    const { row } = call;
    if (decision.authorizationId !== undefined) row.authorizationId = decision.authorizationId;
    // Written with the call's row (or before the first row the call records that names it).
    if (decision.allowed && decision.commit) call.commitAuthorization = decision.commit;
    // Awaited just before the call starts (after its rate-limit admission, for an MCP call).
    if (decision.allowed && decision.ready) call.authorizationReady = decision.ready;
    // Only a call with a thread has a row to replay; one without is refused below.
    if (!decision.allowed && decision.runningElsewhere === true && request.threadId !== undefined) {
      throw new RunningElsewhere(timeoutMs + RECORDING_GRACE_MS);
    }
    if (!decision.allowed) {
      throw new GovernanceError(
        "PERMISSION_DENIED",
        `Call to ${tool.source.id}/${tool.toolId} was not authorized: ${decision.reason}`,
        {
          data: { reason: decision.reason },
        },
      );
    }
    // Only an authorized call counts against its principal's quota; a refused one costs nothing.
    await this.#o.quotas?.admit({
      principal: request.principal,
      sourceId: tool.source.id,
      toolId: tool.toolId,
    });
  }

  /** Waits until the call's authorization row is held; refuses the call, as a throwing hook would, when it cannot be. */
  async #authorizationHeld(call: Call, tool: ResolvedTool): Promise<void> {
    const failure = await authorizationHeld(call);
    if (failure === undefined) return;
    const reason = errorMessage(failure);
    throw new GovernanceError(
      "PERMISSION_DENIED",
      `Call to ${tool.source.id}/${tool.toolId} was not authorized: ${reason}`,
      { data: { reason }, cause: failure },
    );
  }

  /** Asks the permission hook about a call (a throwing hook refuses it). */
  #authorize(
    request: InvokeRequest,
    tool: ResolvedTool,
    input: Record<string, unknown>,
  ): Promise<AuthorizeResult> {
    return Promise.resolve()
      .then(() => this.#o.authorize(authorizationRequestOf(request, tool, input)))
      .catch((error: unknown): AuthorizeResult => ({ allowed: false, reason: errorMessage(error) }));
  }

  /** What the pool needs for a call's upstream requests: the relay, and the round a continuation resumes. */
  #upstreamOf(
    request: InvokeRequest,
    tool: { sourceId: string; toolId: string; input: Record<string, unknown> },
    call: Call,
    continuation: Continuation | undefined,
  ): Pick<UpstreamCallParts, "relay" | "continueFrom"> {
    const relay = this.#upstream.relayFor(
      {
        request,
        ...tool,
        authorizationId: call.row.authorizationId,
        commitAuthorization: call.commitAuthorization,
      },
      continuation,
    );
    return { relay, continueFrom: continuation?.continueFrom };
  }

  #resolve(request: Pick<InvokeRequest, "sourceId" | "toolId" | "sessionId">): ResolvedTool {
    const local = this.#inProcess.get(request.sourceId);
    if (local) {
      const { manifest } = local.source;
      const tool = manifest.tools.find((t) => t.id === request.toolId);
      if (!tool) {
        throw new GovernanceError(
          "TOOL_UNAVAILABLE",
          `Unknown tool '${request.toolId}' of source '${manifest.id}'. Its tools: ${manifest.tools.map((t) => t.id).join(", ")}.`,
        );
      }
      this.#requireEnabled(request.sessionId, manifest);
      return {
        source: manifest,
        toolId: tool.id,
        manifest: tool,
        definitionHash: local.hashes.get(tool.id) as string,
        local: local.source,
      };
    }
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
    this.#requireEnabled(request.sessionId, entry.manifest);
    const tool = this.#o.catalog.requireTool(entry.id, request.toolId);
    return {
      source: entry.manifest,
      toolId: tool.toolId,
      manifest: tool.manifest,
      definitionHash: tool.definitionHash,
      upstream: tool,
    };
  }

  #requireEnabled(session: string, source: SourceManifest): void {
    if (!this.#o.sessions.isSourceEnabled(session, source)) {
      throw new GovernanceError(
        "SOURCE_DISABLED",
        `Source '${source.id}' is not enabled for session '${session}'. Enable it for the session first.`,
      );
    }
  }

  /**
   * Replays a call that another invocation under the same `threadId:toolCallId` runs (another
   * replica's, which consumed the human's decision first) once its row is recorded. This invocation
   * records no row: the key's row is the other one's to write.
   */
  async #replayWhenRecorded(request: InvokeRequest, span: Span, waitMs: number): Promise<InvokeOutcome> {
    let prior: InvocationRecord;
    try {
      prior = await waitForRow(this.#o.ledgerWriter.reader, this.#o.clock, request, waitMs);
    } catch (caught) {
      const error = toGovernanceError(caught);
      endInvocationSpan(span, undefined, false, error);
      throw error;
    }
    if (recordedDigest(prior) !== callDigest(request)) return this.#refuse(request, span, reusedKeyError);
    return this.#replay(prior, span);
  }

  async #replay(prior: InvocationRecord, span: Span): Promise<InvokeOutcome> {
    try {
      const outcome = await replayedOutcome(prior, this.#recorder.objects);
      endInvocationSpan(span, prior, true);
      return outcome;
    } catch (error) {
      endInvocationSpan(span, prior, true, error);
      throw error;
    }
  }

  /**
   * Refuses a call before it starts, audited on a row of its own without the tool call id (the key is
   * another call's, or could not be checked).
   * @param refusal the error, given the refusal row's invocation id
   */
  async #refuse(
    request: InvokeRequest,
    span: Span,
    refusal: (request: InvokeRequest, invocationId: string) => GovernanceError,
  ): Promise<never> {
    const startedMs = this.#o.clock.now();
    const row: Row = this.#recorder.newRow(request, startedMs);
    const error = refusal(request, row.invocationId);
    row.error = { code: error.code, message: error.message, retryable: error.retryable, attempts: 0 };
    endInvocationSpan(span, row, false, error);
    await this.#recorder.record({ row, inline: [], traced: false }, "error", startedMs);
    throw error;
  }
}

/** The signal of an in-process call that no one can abort (no caller's signal). */
const NEVER_ABORTED = new AbortController().signal;

/** What `authorizationRequest` throws for a call that asks no permission. */
function nothingToAuthorize(): GovernanceError {
  return new GovernanceError("INVALID_INPUT", "This call asks no permission: it ran, or runs, already.", {
    data: { reason: "nothing_to_authorize" },
  });
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** An in-process tool's call as its source prepares it. */
function inProcessCallOf(
  call: RefusedCall,
  tool: ResolvedTool,
  input: Record<string, unknown>,
): InProcessCall {
  return {
    toolId: tool.toolId,
    input,
    session: call.sessionId,
    ...optional({ principal: call.principal, threadId: call.threadId, toolCallId: call.toolCallId }),
  };
}

/**
 * The permission request of a call: its source and tool, and its validated arguments (for an in-process
 * tool, what it prepared as the call's subject). One builder, so that a card shown before the call and
 * the call's own permission step see the same request.
 */
function authorizationRequestOf(
  call: RefusedCall,
  tool: ResolvedTool,
  input: Record<string, unknown>,
): AuthorizationRequest {
  return {
    sessionId: call.sessionId,
    principal: call.principal,
    sourceId: tool.source.id,
    toolId: tool.toolId,
    source: tool.source,
    tool: tool.manifest,
    definitionHash: tool.definitionHash,
    input,
    ...optional({ threadId: call.threadId, toolCallId: call.toolCallId }),
  };
}
