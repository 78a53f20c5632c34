/**
 * The governed download manager: plans a download (candidate, its source hosts, licence and
 * destination checked, with no side effect), then runs it as a persisted job (see `download-run.ts`).
 * It serves `artifact_download`, a tool of the built-ins' in-process source that the broker calls like
 * any tool (`artifact-source.ts`): replay, permission and the ledger row are the broker's. A call's job
 * is keyed by its `threadId:toolCallId` (`callJobId`), so that a call a crashed process left continues
 * its job. Every job's progress also goes to the manager's subscribers (`subscribe`), and a job's row
 * in the store is how other processes watch and cancel it.
 */
import { randomUUID } from "node:crypto";
import type { McpToolResult } from "../contract/index.js";
import {
  SPAN_ATTRIBUTES as A,
  type Clock,
  endSpanWithError,
  GovernanceError,
  hashCanonical,
  InflightCalls,
  isGovernanceError,
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
import type { InProcessHost, PreparedCall, RefusedCall } from "../governance/broker/index.js";
import { ARTIFACT_DOWNLOAD_TOOL_ID, SessionSettings } from "../governance/permissions/index.js";
import { downloadCallResult } from "./download-call-result.js";
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
import { defaultDestination, destinationKey } from "./download-path.js";
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

/** What a caller hands a run of its job: the progress hook and the signal (aborting cancels the job). */
export interface DownloadHooks {
  onProgress?: Progress;
  signal?: AbortSignal | undefined;
  /** The id of the row that records the run, named on the job's span. */
  invocationId?: string | undefined;
}

/** A job at its terminal state, and the transfer attempts this run made. */
export interface DownloadRun {
  job: DownloadJob;
  attempts: number;
}

/** A download planned for one call, ready to run once the call is authorized. */
export type PreparedDownload =
  | {
      /** The call's key names the job of another call (another session, principal, candidate or destination). */
      keyTaken: true;
    }
  | {
      keyTaken?: undefined;
      /** What the download is about to do: the facts a person approves. */
      plan: DownloadPlan;
      /** Whether the plan continues the job the same call began (a crashed process left it). */
      continues: boolean;
      /**
       * Runs it: creates the job, or continues the job of the same call (one that ended already is
       * returned as it ended, one running here is joined), and returns it at its terminal state. Writes
       * no ledger row: the broker's call records it.
       */
      run(hooks: DownloadHooks): Promise<DownloadRun>;
    };

/**
 * Records a run no tool call asked for (a retry, the cancellation of a job a crashed process left) as
 * one `artifact_download` row: the broker that serves the built-ins (`Broker.recordRun`).
 */
export type DownloadRecords = InProcessHost;

/** The `sourceId` of the built-ins' calls (`ARTIFACT_SOURCE_ID`), spelt here to keep imports one-way. */
const BUILTIN_SOURCE_ID = "sciencegate";

/**
 * Runs governed downloads. Several may run at once; each returns at its terminal state. `close()`
 * stops admitting downloads and lets the running ones finish or cancels them, each with its row.
 * While a job transfers, its row in the job store shows its bytes (saved every `progressPersistMs`),
 * and a `cancelled` written there by another process stops it.
 * @example
 * const downloads = new DownloadManager({ ledgerWriter, store, catalog, workspaceDir: join(dataDir, "workspace") });
 * downloads.subscribe((progress) => console.log(progress.jobId, progress.status));
 */
export class DownloadManager {
  readonly #opts: DownloadManagerOptions;
  readonly #jobs: DownloadJobStore;
  readonly #fetch: DownloadFetch;
  readonly #clock: Clock;
  readonly #newId: () => string;
  readonly #sessions: SessionSettings;
  readonly #deadlines: DownloadDeadlines;
  readonly #checkHost: (hostname: string) => Promise<void>;
  readonly #progressPersistMs: number;
  readonly #listeners = new Set<(progress: DownloadProgress) => unknown>();
  readonly #running = new Map<string, { controller: AbortController; done: Promise<DownloadRun> }>();
  readonly #reserved = new Set<string>();
  /** Every run and retry admitted before `close()`, with the signal that cuts them. */
  readonly #admitted: InflightCalls;
  #records: DownloadRecords | undefined;

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
    this.#admitted = new InflightCalls(this.#clock, "download manager");
  }

  /** The job store (for listings and the CLI). */
  get jobs(): DownloadJobStore {
    return this.#jobs;
  }

  /** The ledger's writer: its reads hold the invocations that offered the candidates. */
  get ledgerWriter(): LedgerWriter {
    return this.#opts.ledgerWriter;
  }

  /** The CAS of those invocations. */
  get store(): ContentStore {
    return this.#opts.store;
  }

  /**
   * Where the runs no tool call asked for (`retry`, the cancellation of a job a crashed process left)
   * are recorded: the broker serving the built-ins, which `createArtifactSource` attaches.
   * @param records the broker
   */
  recordThrough(records: DownloadRecords): void {
    this.#records = records;
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
   * Checks a request and plans it, without any side effect (no job, no row): what the approval card
   * shows, and what runs once the call is authorized. A call whose key (`threadId:toolCallId`) has a
   * job already is planned from that job: the same call continues it, another call is `keyTaken`. The
   * building block of `artifact_download`; call that tool through `Broker.invoke` (`downloadArtifact`),
   * which authorizes and records the call.
   * @param request invocation, candidate, destination, session, principal and the call's ids
   * @returns the prepared download
   * @throws GovernanceError `NOT_FOUND` (unknown invocation or candidate), `PERMISSION_DENIED` (source
   *   mismatch, URL off the allowlist, an invocation of another session), `LICENSE_BLOCKED`,
   *   `INVALID_INPUT` (bad destination or failed invocation), `SOURCE_DISABLED` (the source is not in
   *   the catalog or is switched off for the session)
   */
  async prepare(request: DownloadRequest): Promise<PreparedDownload> {
    const { threadId, toolCallId } = request;
    const key =
      threadId !== undefined && toolCallId !== undefined ? callJobId(threadId, toolCallId) : undefined;
    const job = key === undefined ? undefined : await this.#jobs.get(key);
    if (job) return this.#prepareAgain(job, request);
    const planned = await planDownload(this.#planDeps(), request);
    return {
      plan: planned.plan,
      continues: false,
      run: (hooks) =>
        this.#admitted.run((closing) => this.#fresh(planned, key ?? this.#newId(), hooks, closing)),
    };
  }

  /**
   * Stops admitting downloads and lets the running ones finish; those still running after `graceMs`
   * are cancelled (job `cancelled`, partial file removed, error `CANCELLED`). The stores are not
   * closed: they belong to whoever created them. Idempotent.
   * @param graceMs how long running downloads may take to finish on their own @default 5000
   * @returns once every admitted download has reached its terminal state
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
   * meanwhile) and its outcome is recorded here, as an `artifact_download` row under its call while
   * that call has none. To cancel a job that runs in another process, mark its row instead
   * (`cancelStoredJob`, as `sciencegate jobs cancel` does); that process stops it within
   * `progressPersistMs`.
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
      const recorded =
        job.threadId !== undefined && job.toolCallId !== undefined
          ? await this.#opts.ledgerWriter.reader.findByCall(job.threadId, job.toolCallId)
          : undefined;
      await this.#recordRun(recordedCall(job, recorded === undefined, { cancelledAfterCrash: true }), {
        run: async ({ tally }) => {
          tally.attempts = job.attempts;
          return this.result(job);
        },
      }).catch((error: unknown) => {
        // The recorded outcome is the cancellation itself.
        if (!(isGovernanceError(error) && error.code === "CANCELLED")) throw error;
      });
      this.#emit(job, job.status);
    }
    return job;
  }

  /**
   * Runs a failed or cancelled job again (same job and plan, candidate re-checked), recorded as an
   * `artifact_download` row of its own without the original tool call id. Permission is not asked
   * again: the job was authorized when it was created, and whoever retries it acts for the user.
   * @param jobId the job
   * @param onProgress optional progress hook
   * @returns the terminal result of the new run
   * @throws GovernanceError `UNKNOWN_ID`; `INVALID_INPUT` when the job is not failed or cancelled; any
   *   refusal of `prepare` when the candidate or destination no longer passes; `CANCELLED` once
   *   `close()` has begun
   */
  retry(jobId: string, onProgress?: (progress: DownloadProgress) => void): Promise<DownloadResult> {
    return this.#admitted.run(async (closing) => {
      const job = await this.#require(jobId);
      if ((job.status !== "failed" && job.status !== "cancelled") || this.#running.has(jobId)) {
        throw notRetryable(jobId, job.status);
      }
      const planned = await replanJob(this.#planDeps(), job, false);
      // Of two processes retrying one job, only the one that moves it from the status it read runs it.
      const queued = await this.#requeue(job, planned, { ifStatus: [job.status] });
      let final: DownloadJob | undefined;
      await this.#recordRun(recordedCall(job, false, {}), {
        license: planned.plan.license,
        run: async ({ tally, invocationId }) => {
          const run = await this.#start(queued, planned, { onProgress, invocationId }, closing);
          final = run.job;
          tally.attempts = run.attempts;
          return this.result(run.job, planned.plan.license);
        },
      }).catch((error: unknown) => {
        // A failed or cancelled run is recorded, and its job says so.
        if (final === undefined) throw error;
      });
      return jobResult(final as DownloadJob);
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

  /**
   * The result of a run at its terminal state, or its failure (see `downloadCallResult`).
   * @param job the terminal job
   * @param license the download's licence @default its source's
   */
  result(job: DownloadJob, license?: string): McpToolResult {
    const source = this.#opts.catalog.source(job.sourceId)?.manifest.governance;
    const facts = {
      license: license ?? source?.license ?? "unknown",
      attribution: source?.attribution ?? job.sourceId,
    };
    return downloadCallResult(job, facts, this.#clock.now());
  }

  #recordRun(call: Omit<RefusedCall, "runId">, prepared: Pick<PreparedCall, "run" | "license">) {
    if (this.#records === undefined) {
      return Promise.reject(
        new GovernanceError(
          "INVALID_INPUT",
          "No broker records this download manager's runs (see createArtifactSource).",
        ),
      );
    }
    return this.#records.recordRun(call, prepared);
  }

  /** A call whose key has a job: the same call continues it, another is refused. */
  async #prepareAgain(job: DownloadJob, request: DownloadRequest): Promise<PreparedDownload> {
    if (
      job.sessionId !== request.sessionId ||
      job.principal !== request.principal ||
      job.mcpInvocationId !== request.mcpInvocationId ||
      job.candidateId !== request.candidateId
    ) {
      return { keyTaken: true };
    }
    const planned = await replanJob(this.#planDeps(), job, true);
    const wanted = request.destinationPath?.trim()
      ? request.destinationPath
      : defaultDestination(planned.plan.candidate);
    if (destinationKey(wanted) !== job.destinationPath) return { keyTaken: true };
    return {
      plan: planned.plan,
      continues: true,
      run: (hooks) => this.#admitted.run((closing) => this.#continue(job.jobId, planned, hooks, closing)),
    };
  }

  /** Runs a new job for a plan. */
  async #fresh(
    planned: PlannedDownload,
    jobId: string,
    hooks: DownloadHooks,
    closing: AbortSignal,
  ): Promise<DownloadRun> {
    const { plan, verified, finalPath } = planned;
    // Planned before the call was authorized: another download may have taken the path since.
    if (this.#reserved.has(finalPath)) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `Another download is already writing '${plan.destinationPath}'.`,
      );
    }
    const job = queuedJob(plan, { jobId, finalPath, warnings: verified.warnings, now: this.#clock.now() });
    await this.#jobs.create(job);
    return this.#start(job, planned, hooks, closing);
  }

  /**
   * The job of a call that ran before: as it ended, joined while it runs here, or run again from where
   * a crashed process left it (Range from the staged bytes).
   */
  async #continue(
    jobId: string,
    planned: PlannedDownload,
    hooks: DownloadHooks,
    closing: AbortSignal,
  ): Promise<DownloadRun> {
    const running = this.#running.get(jobId);
    if (running) return running.done;
    const job = await this.#require(jobId);
    if (TERMINAL_DOWNLOAD_STATES.includes(job.status)) return { job, attempts: 0 };
    return this.#start(await this.#requeue(job, planned, {}), planned, hooks, closing);
  }

  /** Moves a stored job back to `queued` for another run; refused when its status moved on meanwhile. */
  async #requeue(
    job: DownloadJob,
    planned: PlannedDownload,
    options: { ifStatus?: DownloadJobStatus[] },
  ): Promise<DownloadJob> {
    const { error: _dropped, ...rest } = job;
    const queued: DownloadJob = {
      ...rest,
      finalPath: planned.finalPath,
      status: "queued",
      updatedAt: this.#clock.now(),
    };
    if (!(await this.#jobs.update(queued, options))) {
      throw notRetryable(job.jobId, (await this.#require(job.jobId)).status);
    }
    return queued;
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
    planned: PlannedDownload,
    hooks: DownloadHooks,
    closing: AbortSignal,
  ): Promise<DownloadRun> {
    const { plan, verified } = planned;
    // `cancel(jobId)` aborts the controller; `close()` past its grace period aborts `closing`; the
    // caller's own signal cancels it too.
    const controller = new AbortController();
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
      hosts: verified.hosts,
      signal: AbortSignal.any(
        hooks.signal ? [controller.signal, closing, hooks.signal] : [controller.signal, closing],
      ),
      progress: this.#sink(hooks.onProgress),
    })
      .then((final): DownloadRun => {
        endJobSpan(span, final, final.attempts - job.attempts, hooks.invocationId);
        return { job: final, attempts: final.attempts - job.attempts };
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

/**
 * The recorded call of a run no tool call asked for: the job's session and principal, keyed by the
 * job's own call only when that call has no row yet (`keyed`).
 */
function recordedCall(
  job: DownloadJob,
  keyed: boolean,
  extra: Record<string, unknown>,
): Omit<RefusedCall, "runId"> {
  return {
    sourceId: BUILTIN_SOURCE_ID,
    toolId: ARTIFACT_DOWNLOAD_TOOL_ID,
    input: { jobId: job.jobId, mcpInvocationId: job.mcpInvocationId, candidateId: job.candidateId, ...extra },
    sessionId: job.sessionId,
    ...(job.principal === undefined ? {} : { principal: job.principal }),
    ...(job.threadId === undefined ? {} : { threadId: job.threadId }),
    ...(keyed && job.threadId !== undefined && job.toolCallId !== undefined
      ? { toolCallId: job.toolCallId }
      : {}),
  };
}

/**
 * The job id of a download made by a graph tool call: derived from `threadId:toolCallId`, so a
 * re-run of the call (a resumed task, a restarted process) finds its job instead of starting another.
 * @param threadId the LangGraph thread
 * @param toolCallId the tool call
 * @returns a UUID-shaped id
 */
export function callJobId(threadId: string, toolCallId: string): string {
  const hex = hashCanonical([ARTIFACT_DOWNLOAD_TOOL_ID, threadId, toolCallId]);
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20, 32)].join(
    "-",
  );
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
function endJobSpan(
  span: Span,
  final: DownloadJob,
  attempts: number,
  invocationId: string | undefined,
): void {
  if (span.isRecording()) {
    if (invocationId !== undefined) span.setAttribute(A.invocationId, invocationId);
    span.setAttribute(A.downloadStatus, final.status);
    span.setAttribute(A.downloadBytes, final.bytesDownloaded);
    span.setAttribute(A.attempts, attempts);
    if (final.status !== "completed")
      setSpanError(span, final.error?.code ?? final.status, final.error?.message);
  }
  span.end();
}
