/**
 * The governed download manager: checks a candidate, its source hosts, license and
 * destination, asks permission, then runs a persisted job (see `download-run.ts`) and appends one
 * ledger row at its terminal state. A graph tool call (`threadId:toolCallId`) downloads at most once:
 * a re-run returns the recorded outcome. Every job's progress also goes to the manager's subscribers
 * (`subscribe`), and a job's row in the store is how other processes watch and cancel it.
 */
import { randomUUID } from "node:crypto";
import {
  SPAN_ATTRIBUTES as A,
  type Clock,
  endSpanWithError,
  GovernanceError,
  hashCanonical,
  InflightCalls,
  SPAN_NAMES,
  type Span,
  SpanKind,
  type SpanOptions,
  setSpanError,
  startSpan,
  systemClock,
  withActiveSpan,
} from "../core/index.js";
import type { ContentStore, LedgerWriter } from "../governance/audit/index.js";
import { SessionSettings } from "../governance/permissions/index.js";
import { DOWNLOAD_LEDGER_TOOL_ID } from "./artifact-ledger-types.js";
import { SESSION_BINDING_REASONS } from "./download-candidate.js";
import { type DownloadDeadlines, downloadDeadlines } from "./download-deadline.js";
import type { DownloadFetch } from "./download-fetch.js";
import { createHostAddressCheck, defaultDownloadLookup } from "./download-host-check.js";
import { progressPersistInterval } from "./download-job-row.js";
import {
  cancelStoredJob,
  type DownloadJob,
  type DownloadJobFilter,
  type DownloadJobStatus,
  type DownloadJobStore,
  MemoryDownloadJobStore,
  TERMINAL_DOWNLOAD_STATES,
  unknownJob,
} from "./download-job-store.js";
import {
  type ArtifactLedgerDeps,
  appendArtifactRow,
  appendDownloadRow,
  appendOrphanCancelRow,
  builtinInput,
  callJobId,
  recordedDownload,
  refuseForeignCall,
  sameBuiltinCall,
} from "./download-ledger.js";
import { type PlanDeps, type PlannedDownload, planDownload, replanJob } from "./download-plan.js";
import { cancelledError, jobResult, type ProgressSink, queuedJob, runDownloadJob } from "./download-run.js";
import {
  DEFAULT_DOWNLOAD_MAX_BYTES,
  type DownloadManagerOptions,
  type DownloadPlan,
  type DownloadProgress,
  type DownloadRequest,
  type DownloadResult,
} from "./download-types.js";
import { createPinnedHttpsFetch } from "./pinned-https-fetch.js";

type Progress = ((progress: DownloadProgress) => void) | undefined;

/** What a caller hands a run of its job: the progress hook and the call's signal (aborting cancels the job). */
interface CallHooks {
  onProgress?: Progress;
  signal?: AbortSignal | undefined;
  /** The call's arguments as given (`downloadInput`), stored on its row; absent for a retry. */
  input?: Record<string, unknown> | undefined;
}

/** The arguments of a download call, as its replay key binds them. */
function downloadInput(request: DownloadRequest): Record<string, unknown> {
  return builtinInput({
    mcpInvocationId: request.mcpInvocationId,
    candidateId: request.candidateId,
    destinationPath: request.destinationPath,
  });
}

/**
 * Runs governed downloads. Several may run at once; each returns at its terminal state. `close()`
 * stops admitting downloads and lets the running ones finish or cancels them, each with its row.
 * While a job transfers, its row in the job store shows its bytes (saved every `progressPersistMs`),
 * and a `cancelled` written there by another process stops it.
 * @example
 * const downloads = new DownloadManager({ ledgerWriter, store, catalog, workspaceDir: join(dataDir, "workspace") });
 * const result = await downloads.download({ mcpInvocationId, candidateId, sessionId: "t1" });
 */
export class DownloadManager {
  readonly #opts: DownloadManagerOptions;
  readonly #jobs: DownloadJobStore;
  readonly #fetch: DownloadFetch;
  readonly #clock: Clock;
  readonly #newId: () => string;
  readonly #rows: ArtifactLedgerDeps;
  readonly #sessions: SessionSettings;
  readonly #deadlines: DownloadDeadlines;
  readonly #checkHost: (hostname: string) => Promise<void>;
  readonly #progressPersistMs: number;
  readonly #listeners = new Set<(progress: DownloadProgress) => unknown>();
  readonly #running = new Map<string, { controller: AbortController; done: Promise<DownloadResult> }>();
  readonly #reserved = new Set<string>();
  /** Tool calls being downloaded, by `threadId:toolCallId`: a concurrent twin shares the download. */
  /** Calls running now, by `callJobId`, with the session that made each. */
  readonly #calls = new Map<
    string,
    { sessionId: string; principal: string | undefined; input: string; work: Promise<DownloadResult> }
  >();
  /** Every `download` and `retry` admitted before `close()`, with the signal that cuts them. */
  readonly #admitted: InflightCalls;

  /**
   * @param options stores, workspace, limits and seams
   * @throws GovernanceError `INVALID_INPUT` for a deadline or `progressPersistMs` that is not a positive
   *   number of ms, or an `allowPrivateAddresses` entry that is no host name, address or CIDR range
   */
  constructor(options: DownloadManagerOptions) {
    this.#opts = options;
    this.#deadlines = downloadDeadlines(options);
    this.#progressPersistMs = progressPersistInterval(options.progressPersistMs);
    const lookup = options.lookup ?? defaultDownloadLookup;
    this.#checkHost = createHostAddressCheck(lookup, options.allowPrivateAddresses);
    this.#jobs = options.jobStore ?? new MemoryDownloadJobStore();
    // The default connects only to the addresses its own screen passed (see pinned-https-fetch.ts).
    this.#fetch =
      options.fetch ?? createPinnedHttpsFetch({ lookup, allowance: options.allowPrivateAddresses ?? false });
    this.#clock = options.clock ?? systemClock;
    this.#newId = options.newId ?? randomUUID;
    this.#sessions = options.sessions ?? new SessionSettings();
    this.#rows = { ledgerWriter: options.ledgerWriter, store: options.store, newId: this.#newId };
    this.#admitted = new InflightCalls(this.#clock, "download manager");
  }

  /** The job store (for listings and the CLI). */
  get jobs(): DownloadJobStore {
    return this.#jobs;
  }

  /** The ledger's writer: its reads hold the candidates' invocations, and the download rows go through it. */
  get ledgerWriter(): LedgerWriter {
    return this.#opts.ledgerWriter;
  }

  /** The CAS of those invocations and of the rows' entries. */
  get store(): ContentStore {
    return this.#opts.store;
  }

  /**
   * Listens to the progress of every job this manager runs (fresh downloads, resumed calls, retries):
   * `queued` when a run starts, each status change and each byte count, in order per job, ending with
   * the terminal status; and the `cancelled` of a job `cancel` ends without running it. Listeners are
   * called synchronously in the run, so keep them cheap (queue the work); one that throws (or returns a
   * promise that rejects) is ignored and the download goes on. With no listener nothing is built for them.
   * @param listener called with each event
   * @returns unsubscribes this listener (idempotent)
   * @example
   * const stop = governance.downloads.subscribe((p) => sse.send(p.jobId, p));
   * // later
   * stop();
   */
  subscribe(listener: (progress: DownloadProgress) => void): () => void {
    // A wrapper per call, so the same function subscribed twice is unsubscribed once per call.
    const entry = (progress: DownloadProgress) => listener(progress);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  /**
   * Checks a request and plans it, without any side effect (no job, no permission asked, no row, except
   * the audit row of a request refused for naming another session's invocation or a source switched
   * off for the session): what the approval card is built from.
   * @param request invocation, candidate, destination and session
   * @returns the plan (a fresh `planId` each time; every other field is stable)
   * @throws GovernanceError as `download` does before any job exists
   */
  async prepare(request: DownloadRequest): Promise<DownloadPlan> {
    return (await this.#plan(request)).plan;
  }

  /**
   * Whether a graph tool call's key already has a download or a row, so that nothing is asked again:
   * `download` replays the call, or refuses a call whose key another call used.
   * @param threadId the LangGraph thread
   * @param toolCallId the tool call
   * @returns true when the key has a job or a row (of any tool)
   */
  async hasCall(threadId: string, toolCallId: string): Promise<boolean> {
    if (this.#calls.has(callJobId(threadId, toolCallId))) return true;
    if ((await this.#jobs.get(callJobId(threadId, toolCallId))) !== undefined) return true;
    return (await this.#opts.ledgerWriter.reader.findByCall(threadId, toolCallId)) !== undefined;
  }

  /**
   * Checks and downloads one candidate. With `threadId` and `toolCallId` the call is idempotent: a
   * call that already has a job returns its terminal result (or waits for it), never downloading twice.
   * @param request invocation, candidate, destination, session, call ids, progress hook and signal
   *   (aborting it cancels the job: it ends `cancelled` with its row, for a twin of the call too)
   * @returns the terminal job result (failures are results, not throws)
   * @throws GovernanceError before any job exists: `NOT_FOUND` (unknown invocation or candidate),
   *   `PERMISSION_DENIED` (source mismatch, URL off the allowlist, an invocation of another session, or
   *   denied: the last two recorded as an error row), `LICENSE_BLOCKED`, `INVALID_INPUT` (bad
   *   destination or failed invocation), `SOURCE_DISABLED` (recorded when the source is switched off
   *   for the session);
   *   `CANCELLED` (no job, no row) once `close()` has begun
   */
  download(request: DownloadRequest): Promise<DownloadResult> {
    const { threadId, toolCallId } = request;
    if (threadId === undefined || toolCallId === undefined) {
      return this.#admitted.run((closing) => this.#fresh(request, closing));
    }
    const key = callJobId(threadId, toolCallId);
    const input = hashCanonical(downloadInput(request));
    const inFlight = this.#calls.get(key);
    // A twin of the same call joins the running one; any other call under its key is refused.
    if (
      inFlight?.sessionId === request.sessionId &&
      inFlight.principal === request.principal &&
      inFlight.input === input
    ) {
      return inFlight.work;
    }
    if (inFlight) {
      return this.#admitted.run(async () => {
        const invocation = await this.#opts.ledgerWriter.reader.get(request.mcpInvocationId);
        return this.#refuseForeign(request, invocation?.sourceId ?? "unknown");
      });
    }
    const work = this.#admitted
      .run(async (closing) => {
        const replayed = await this.#replay(threadId, toolCallId, request, closing);
        return replayed ?? this.#fresh(request, closing);
      })
      .finally(() => {
        if (this.#calls.get(key)?.work === work) this.#calls.delete(key);
      });
    this.#calls.set(key, { sessionId: request.sessionId, principal: request.principal, input, work });
    return work;
  }

  /**
   * Stops admitting downloads and lets the running ones finish; those still running after `graceMs`
   * are cancelled (job `cancelled`, partial file removed, error `CANCELLED`). Each one still writes its
   * ledger row. The stores are not closed: they belong to whoever created them. Idempotent.
   * @param graceMs how long running downloads may take to finish on their own @default 5000
   * @returns once every admitted download has reached its terminal state and written its row
   */
  close(graceMs?: number): Promise<void> {
    return this.#admitted.close(graceMs);
  }

  /**
   * Whether this manager runs the job now (another process may run a job this one does not).
   * @param jobId the job
   */
  isRunning(jobId: string): boolean {
    return this.#running.has(jobId);
  }

  /**
   * Cancels a queued or running job; its partial file is removed. A job this manager does not run is
   * taken as left by a crashed process: it is marked `cancelled` in the store (unless it ended
   * meanwhile) and its row is written here. To cancel a job that runs in another process, mark its
   * row instead (`cancelStoredJob`, as `sciencegate jobs cancel` does); that process stops it within
   * `progressPersistMs` and writes its row.
   * @param jobId the job
   * @returns the job after cancellation (unchanged when it was already terminal)
   * @throws GovernanceError `UNKNOWN_ID` for an unknown job
   */
  async cancel(jobId: string): Promise<DownloadJob> {
    const running = this.#running.get(jobId);
    if (running) {
      running.controller.abort();
      await running.done;
      return this.#require(jobId);
    }
    const { job, cancelled } = await cancelStoredJob(this.#jobs, jobId, {
      error: cancelledError(),
      now: this.#clock.now(),
    });
    if (cancelled) {
      await appendOrphanCancelRow(this.#rows, job);
      this.#emit(job, job.status);
    }
    return job;
  }

  /**
   * Runs a failed or cancelled job again (same job and plan, candidate re-checked). Permission is not
   * asked again: the job was authorized when it was created, and whoever retries it acts for the user.
   * The run gets its own ledger row, without the original tool call id.
   * @param jobId the job
   * @param onProgress optional progress hook
   * @returns the terminal result of the new run
   * @throws GovernanceError `UNKNOWN_ID`; `INVALID_INPUT` when the job is not failed or cancelled; any
   *   refusal of `download` when the candidate or destination no longer passes; `CANCELLED` once
   *   `close()` has begun
   */
  retry(jobId: string, onProgress?: (progress: DownloadProgress) => void): Promise<DownloadResult> {
    return this.#admitted.run(async (closing) => {
      const job = await this.#require(jobId);
      if ((job.status !== "failed" && job.status !== "cancelled") || this.#running.has(jobId)) {
        throw notRetryable(jobId, job.status);
      }
      return this.#rerun(job, { onProgress }, false, closing);
    });
  }

  /**
   * Every job, or those `filter` selects, oldest first.
   * @param filter `mcpInvocationId`: only the jobs made from that invocation's candidates
   * @returns the stored jobs
   */
  list(filter?: DownloadJobFilter): Promise<DownloadJob[]> {
    return this.#jobs.list(filter);
  }

  async #fresh(request: DownloadRequest, closing: AbortSignal): Promise<DownloadResult> {
    const input = downloadInput(request);
    const { plan, verified, finalPath } = await this.#plan(request, input);
    const authorizationId = await this.#authorize(plan, input);
    const job = queuedJob(plan, {
      jobId:
        plan.threadId !== undefined && plan.toolCallId !== undefined
          ? callJobId(plan.threadId, plan.toolCallId)
          : this.#newId(),
      finalPath,
      warnings: verified.warnings,
      now: this.#clock.now(),
    });
    await this.#jobs.create(job);
    const hooks: CallHooks = { onProgress: request.onProgress, signal: request.signal, input };
    return this.#start(job, plan, verified.hosts, hooks, authorizationId, closing);
  }

  /**
   * Plans a request; a refusal that binds the candidate to its session (another session's invocation,
   * a source switched off for this session) is recorded as an error row before it is thrown. The row
   * keeps the thread but not the tool call id, so a refused call never takes a call's replay key.
   * Any other refusal of a call being made (`input` given) with a `threadId:toolCallId` is that call's
   * outcome, recorded under its key as the broker records a refused call: a re-run replays it.
   */
  async #plan(request: DownloadRequest, input?: Record<string, unknown>): Promise<PlannedDownload> {
    const startedAt = this.#clock.now();
    try {
      return await planDownload(this.#planDeps(), request);
    } catch (error) {
      const binding = error instanceof GovernanceError && SESSION_BINDING_REASONS.has(error.data?.reason);
      const keyed = input !== undefined && request.threadId !== undefined && request.toolCallId !== undefined;
      if (error instanceof GovernanceError && (binding || keyed)) {
        const invocation = await this.#opts.ledgerWriter.reader.get(request.mcpInvocationId);
        await appendArtifactRow(this.#rows, {
          ...(binding ? {} : { toolCallId: request.toolCallId }),
          sessionId: request.sessionId,
          principal: request.principal,
          threadId: request.threadId,
          sourceId: invocation?.sourceId ?? "unknown",
          toolId: DOWNLOAD_LEDGER_TOOL_ID,
          startedAt,
          finishedAt: this.#clock.now(),
          attempts: 0,
          request: {
            mcpInvocationId: request.mcpInvocationId,
            candidateId: request.candidateId,
            destinationPath: request.destinationPath,
            sessionId: request.sessionId,
            threadId: request.threadId,
            toolCallId: request.toolCallId,
            ...(binding ? {} : { input }),
          },
          error: { code: error.code, message: error.message, retryable: binding ? false : error.retryable },
        });
      }
      throw error;
    }
  }

  /** Asks the hook; a denial is recorded as an error row before it is thrown. */
  async #authorize(plan: DownloadPlan, input: Record<string, unknown>): Promise<string | undefined> {
    if (!this.#opts.authorize) return undefined;
    const startedAt = this.#clock.now();
    const decision = await this.#opts.authorize(plan);
    if (decision.allowed) {
      // A download is slow anyway: its authorization row commits before it starts.
      await decision.commit?.();
      return decision.authorizationId;
    }
    const refusal = new GovernanceError("PERMISSION_DENIED", `Download refused: ${decision.reason}`, {
      data: { candidateId: plan.candidate.candidateId, destinationPath: plan.destinationPath },
    });
    await appendDownloadRow(this.#rows, plan, {
      startedAt,
      finishedAt: this.#clock.now(),
      attempts: 0,
      authorizationId: decision.authorizationId,
      error: { code: refusal.code, message: refusal.message, retryable: false },
      input,
    });
    throw refusal;
  }

  /**
   * The outcome of a call that already has a job or a row; `undefined` when it never ran. A key whose
   * job or row is another session's is refused (audited), so a session never reads another's download.
   */
  async #replay(
    threadId: string,
    toolCallId: string,
    request: DownloadRequest,
    closing: AbortSignal,
  ): Promise<DownloadResult | undefined> {
    const input = downloadInput(request);
    const hooks: CallHooks = { onProgress: request.onProgress, signal: request.signal, input };
    const row = await this.#opts.ledgerWriter.reader.findByCall(threadId, toolCallId);
    const call = {
      sessionId: request.sessionId,
      principal: request.principal,
      toolId: DOWNLOAD_LEDGER_TOOL_ID,
      input,
    };
    // One replay rule with the broker's: the key replays only the call that first used it.
    if (row && !(await sameBuiltinCall(this.#opts.store, row, call))) {
      return this.#refuseForeign(request, row.sourceId);
    }
    const job = await this.#jobs.get(callJobId(threadId, toolCallId));
    if (
      job &&
      (job.sessionId !== request.sessionId ||
        job.mcpInvocationId !== request.mcpInvocationId ||
        job.candidateId !== request.candidateId)
    ) {
      return this.#refuseForeign(request, job.sourceId);
    }
    if (job && TERMINAL_DOWNLOAD_STATES.includes(job.status)) return jobResult(job);
    const running = job && this.#running.get(job.jobId);
    if (running) return running.done;
    if (row) return recordedDownload(this.#opts.store, row);
    // A job of this call with no row and not running here: a crashed process left it mid-way; the
    // approved call resumes it (Range from the staged bytes).
    return job ? this.#rerun(job, hooks, true, closing) : undefined;
  }

  /**
   * Runs a stored job again after re-checking its candidate and destination. A retry requeues it only
   * from the status it was read in, so that of two processes retrying one job only one runs it.
   */
  async #rerun(
    job: DownloadJob,
    hooks: CallHooks,
    sameCall: boolean,
    closing: AbortSignal,
  ): Promise<DownloadResult> {
    const { plan, verified, finalPath } = await replanJob(this.#planDeps(), job, sameCall);
    const { error: _dropped, ...rest } = job;
    const queued: DownloadJob = { ...rest, finalPath, status: "queued", updatedAt: this.#clock.now() };
    if (!(await this.#jobs.update(queued, sameCall ? {} : { ifStatus: [job.status] }))) {
      throw notRetryable(job.jobId, (await this.#require(job.jobId)).status);
    }
    return this.#start(queued, plan, verified.hosts, hooks, undefined, closing);
  }

  #refuseForeign(request: DownloadRequest, sourceId: string): Promise<never> {
    const now = this.#clock.now();
    const { mcpInvocationId, candidateId, destinationPath } = request;
    return refuseForeignCall(this.#rows, {
      ...request,
      sourceId,
      toolId: DOWNLOAD_LEDGER_TOOL_ID,
      request: { mcpInvocationId, candidateId, destinationPath },
      startedAt: now,
      finishedAt: now,
    });
  }

  #planDeps(): PlanDeps {
    return {
      ...this.#opts,
      ledger: this.#opts.ledgerWriter.reader,
      sessions: this.#sessions,
      newId: this.#newId,
      reserved: this.#reserved,
    };
  }

  #start(
    job: DownloadJob,
    plan: DownloadPlan,
    hosts: ReadonlySet<string>,
    hooks: CallHooks,
    authorizationId: string | undefined,
    closing: AbortSignal,
  ): Promise<DownloadResult> {
    // `cancel(jobId)` aborts the controller; `close()` past its grace period aborts `closing`; the
    // caller's own signal (`DownloadRequest.signal`) cancels it too.
    const controller = new AbortController();
    const startedAt = this.#clock.now();
    this.#reserved.add(job.finalPath);
    // Under the active span (the tool call's); active itself while the transfer runs.
    const span = startSpan(SPAN_NAMES.downloadJob, DOWNLOAD_JOB_SPAN_OPTIONS);
    if (span.isRecording()) describeJob(span, job, plan);
    this.#emit(job, "queued", plan.candidate.sizeBytes);
    const done = withActiveSpan(span, runDownloadJob, undefined, job, {
      jobs: this.#jobs,
      fetch: this.#fetch,
      clock: this.#clock,
      workspaceDir: this.#opts.workspaceDir,
      maxBytes: this.#opts.maxBytes ?? DEFAULT_DOWNLOAD_MAX_BYTES,
      maxAttempts: this.#opts.maxAttempts ?? 4,
      initialBackoffMs: this.#opts.initialBackoffMs ?? 500,
      deadlines: this.#deadlines,
      progressPersistMs: this.#progressPersistMs,
      checkHost: this.#checkHost,
      candidate: plan.candidate,
      hosts,
      signal: AbortSignal.any(
        hooks.signal ? [controller.signal, closing, hooks.signal] : [controller.signal, closing],
      ),
      progress: this.#sink(hooks.onProgress),
    })
      .then(async (final) => {
        const row = await appendDownloadRow(this.#rows, plan, {
          startedAt,
          finishedAt: this.#clock.now(),
          attempts: final.attempts - job.attempts,
          authorizationId,
          job: final,
          input: hooks.input,
        });
        endJobSpan(span, final, final.attempts - job.attempts, row.invocationId);
        return jobResult(final);
      })
      .catch((error: unknown) => {
        endSpanWithError(span, error);
        throw error;
      })
      .finally(() => {
        this.#running.delete(job.jobId);
        this.#reserved.delete(job.finalPath);
      });
    this.#running.set(job.jobId, { controller, done });
    return done;
  }

  /** A run's progress sink: the call's own hook, then the subscribers. */
  #sink(onProgress: Progress): ProgressSink {
    const listeners = this.#listeners;
    return {
      get active() {
        return onProgress !== undefined || listeners.size > 0;
      },
      emit: (progress) => {
        try {
          onProgress?.(progress);
        } finally {
          this.#publish(progress);
        }
      },
    };
  }

  /** Tells the subscribers of a job's status that no run reports itself (a run's start, a cancel here). */
  #emit(job: DownloadJob, status: DownloadJobStatus, totalBytes?: number): void {
    if (this.#listeners.size === 0) return;
    const { jobId, candidateId, bytesDownloaded } = job;
    this.#publish({
      jobId,
      candidateId,
      status,
      bytesDownloaded,
      ...(totalBytes === undefined ? {} : { totalBytes }),
    });
  }

  #publish(progress: DownloadProgress): void {
    for (const listener of this.#listeners) {
      // A subscriber's failure is its own: the download and the other subscribers go on.
      try {
        const returned = listener(progress);
        if (returned instanceof Promise) returned.catch(() => undefined);
      } catch {}
    }
  }

  async #require(jobId: string): Promise<DownloadJob> {
    const job = await this.#jobs.get(jobId);
    if (job === undefined) throw unknownJob(jobId);
    return job;
  }
}

/** The refusal of a retry of a job that is not failed or cancelled (any more). */
function notRetryable(jobId: string, status: DownloadJobStatus): GovernanceError {
  return new GovernanceError(
    "INVALID_INPUT",
    `Job ${jobId} is ${status}; only failed or cancelled jobs are retried.`,
  );
}

/** One run of a download job, from queued to its terminal state and ledger row. */
const DOWNLOAD_JOB_SPAN_OPTIONS: SpanOptions = Object.freeze({ kind: SpanKind.INTERNAL });

function describeJob(span: Span, job: DownloadJob, plan: DownloadPlan): void {
  span.setAttribute(A.downloadJobId, job.jobId);
  span.setAttribute(A.sourceId, plan.candidate.sourceId);
  span.setAttribute(A.downloadCandidateId, plan.candidate.candidateId);
  span.setAttribute(A.offeredBy, plan.mcpInvocationId);
  span.setAttribute(A.sessionId, plan.sessionId);
  if (plan.threadId !== undefined) span.setAttribute(A.genAiConversationId, plan.threadId);
  if (plan.toolCallId !== undefined) span.setAttribute(A.genAiToolCallId, plan.toolCallId);
}

/** Ends a job's span with its terminal state and its row's invocation id; a failed or cancelled job is an error. */
function endJobSpan(span: Span, final: DownloadJob, attempts: number, invocationId: string): void {
  if (span.isRecording()) {
    span.setAttribute(A.invocationId, invocationId);
    span.setAttribute(A.downloadStatus, final.status);
    span.setAttribute(A.downloadBytes, final.bytesDownloaded);
    span.setAttribute(A.attempts, attempts);
    if (final.status !== "completed")
      setSpanError(span, final.error?.code ?? final.status, final.error?.message);
  }
  span.end();
}
