/**
 * The live side of the Downloads page: what a job looks like to the page (`jobEvent`: status, tone,
 * bytes, which actions it allows) and `GET /jobs/events`, server-sent events that follow the job store.
 * The streams follow the store through the console's one `JobFeed`, so a job running in another process
 * (which saves its byte count as it goes) moves on the page too (see ARCHITECTURE.md, "The console").
 */
import type { ServerResponse } from "node:http";
import type { DownloadJob, DownloadJobStatus } from "../artifacts/index.js";
import { type Clock, isGovernanceError } from "../core/index.js";
import type { Governance } from "../runtime/index.js";
import { pageOf, pageParam } from "./console-paging.js";
import type { ConsoleRoute } from "./console-route.js";
import { jobFeedOf } from "./job-feed.js";

/** A comment line after this long without an event keeps proxies from closing the stream. */
export const HEARTBEAT_MS = 15_000;
/** Live streams one console serves at once; one more is answered 503. */
export const MAX_JOB_STREAMS = 32;
/** A client that has not read this much of the stream is dropped (its EventSource reconnects). */
const MAX_UNREAD_BYTES = 1024 * 1024;
/** How long a job's error message may be on the page and in an event. */
export const JOB_ERROR_TEXT_LIMIT = 500;

/** What the page (and its script) knows of one job. */
export interface JobEvent {
  jobId: string;
  status: DownloadJobStatus;
  /** The badge colour of the status. */
  tone: "ok" | "error" | "warn" | "neutral";
  bytesDownloaded: number;
  attempts: number;
  /** ISO-8601. */
  updatedAt: string;
  error: { code: string; message: string } | null;
  /** Whether the Cancel action applies (the job has not ended). */
  cancellable: boolean;
  /** Whether the Retry action applies (the job failed or was cancelled). */
  retryable: boolean;
}

const TONE: Record<DownloadJobStatus, JobEvent["tone"]> = {
  queued: "neutral",
  running: "neutral",
  verifying: "neutral",
  retrying: "warn",
  completed: "ok",
  failed: "error",
  cancelled: "warn",
};

/**
 * A job as the Downloads page shows it: the one rule for its badge and its actions.
 * @param job the stored job
 */
export function jobEvent(job: DownloadJob): JobEvent {
  const ended = job.status === "completed" || job.status === "failed" || job.status === "cancelled";
  return {
    jobId: job.jobId,
    status: job.status,
    tone: TONE[job.status] ?? "neutral",
    bytesDownloaded: job.bytesDownloaded,
    attempts: job.attempts,
    updatedAt: new Date(job.updatedAt).toISOString(),
    error: job.error
      ? { code: job.error.code, message: job.error.message.slice(0, JOB_ERROR_TEXT_LIMIT) }
      : null,
    cancellable: !ended,
    retryable: job.status === "failed" || job.status === "cancelled",
  };
}

/**
 * The jobs of one page of the Downloads list: newest first.
 * @param jobs every job, oldest first (as the store lists them)
 * @param page the 1-based page
 */
export function jobsPage(jobs: readonly DownloadJob[], page: number) {
  return pageOf([...jobs].reverse(), page);
}

/** Open streams per console (keyed by the console's closing signal, one per handler). */
const openStreams = new WeakMap<AbortSignal, number>();

/** `GET /jobs/events?page=N`: a `snapshot` event of the page's jobs, then a `job` event per change. */
export const jobsStreamRoute: ConsoleRoute = {
  method: "GET",
  pattern: "/jobs/events",
  async handle(request, context) {
    const page = pageParam(request.url);
    const open = openStreams.get(context.signal) ?? 0;
    if (open >= MAX_JOB_STREAMS) {
      return {
        kind: "file",
        status: 503,
        contentType: "text/plain; charset=utf-8",
        body: `${MAX_JOB_STREAMS} live job streams are open already; reload the page to see the jobs as they are.\n`,
        headers: { "Retry-After": "10" },
      };
    }
    openStreams.set(context.signal, open + 1);
    return {
      kind: "stream",
      run: (response) =>
        streamJobs(response, context, page).finally(() =>
          openStreams.set(context.signal, (openStreams.get(context.signal) ?? 1) - 1),
        ),
    };
  },
};

async function streamJobs(
  response: ServerResponse,
  context: { governance: Governance; clock: Clock; signal: AbortSignal },
  page: number,
): Promise<void> {
  const { governance, clock } = context;
  const gone = new AbortController();
  response.once("close", () => gone.abort());
  const stop = AbortSignal.any([context.signal, gone.signal]);
  // `Cache-Control: no-store` is already set, as on every console answer.
  response.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "X-Accel-Buffering": "no" });
  let lastWrite = clock.now();
  /** Writes; false when the client has stopped reading (the stream then ends). */
  const send = (text: string): boolean => {
    response.write(text);
    lastWrite = clock.now();
    return response.writableLength <= MAX_UNREAD_BYTES;
  };
  const feed = jobFeedOf(context.signal, () => governance.downloads.list(), clock);
  const updates = feed.subscribe();
  try {
    const jobs = await feed.snapshot();
    let seen = new Map(jobs.map((job) => [job.jobId, changeKey(job)]));
    const snapshot = { jobs: jobsPage(jobs, page).items.map(jobEvent) };
    if (!send(`retry: 3000\nevent: snapshot\ndata: ${JSON.stringify(snapshot)}\n\n`)) return;
    for (;;) {
      const update = await updates.next(stop);
      if (update === undefined) return;
      if ("error" in update) throw update.error;
      for (const job of jobsPage(update.jobs, page).items) {
        if (seen.get(job.jobId) === changeKey(job)) continue;
        if (!send(`event: job\ndata: ${JSON.stringify(jobEvent(job))}\n\n`)) return;
      }
      seen = new Map(update.jobs.map((job) => [job.jobId, changeKey(job)]));
      if (clock.now() - lastWrite >= HEARTBEAT_MS && !send(": heartbeat\n\n")) return;
    }
  } catch (error) {
    // A store closed with the runtime ends the stream quietly (the browser's EventSource reconnects,
    // and the page works without it); anything else is worth a line.
    if (!stop.aborted && !(isGovernanceError(error) && error.code === "UPSTREAM_UNAVAILABLE")) {
      process.stderr.write(`sciencegate console: the job stream ended: ${String(error)}\n`);
    }
  } finally {
    updates.close();
    response.end();
  }
}

/** What makes a job worth an event: its status, its bytes or its last change. */
function changeKey(job: DownloadJob): string {
  return `${job.status}|${job.bytesDownloaded}|${job.updatedAt}|${job.attempts}`;
}
