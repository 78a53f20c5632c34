/**
 * The live side of the Downloads page: what a job looks like to the page (`jobEvent`: status, tone,
 * bytes, which actions it allows) and `GET /jobs/events`, server-sent events that follow the job store.
 * The streams follow the store through the console's one `JobFeed`, so a job running in another process
 * (which saves its byte count as it goes) moves on the page too; their places are shared fairly between
 * clients (`StreamSlots`), so no client can take them all (see ARCHITECTURE.md, "The console").
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
/** Live streams one console serves at once. */
export const MAX_JOB_STREAMS = 32;
/** Live streams of one client (address) at once; its next one replaces its oldest. */
export const MAX_JOB_STREAMS_PER_CLIENT = 8;
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

/** One open stream's place: its client, and the signal that ends it when another takes the place. */
interface StreamSlot {
  client: string;
  replaced: AbortController;
}

/**
 * The places of one console's streams, per client (oldest first). A client at its bound gives its
 * oldest stream's place to its new one; when every place is taken, a client holding fewer than the
 * client holding most takes that one's oldest place; only a newcomer holding as many is refused.
 */
class StreamSlots {
  readonly #byClient = new Map<string, StreamSlot[]>();
  #count = 0;

  /** @returns the new stream's place, or `undefined` when there is none for this client */
  take(client: string): StreamSlot | undefined {
    const own = this.#byClient.get(client) ?? [];
    let victim: StreamSlot | undefined;
    if (own.length >= MAX_JOB_STREAMS_PER_CLIENT) victim = own[0];
    else if (this.#count >= MAX_JOB_STREAMS) {
      const largest = [...this.#byClient.values()].reduce((a, b) => (b.length > a.length ? b : a), []);
      if (largest.length <= own.length) return undefined;
      victim = largest[0];
    }
    if (victim) {
      this.give(victim);
      victim.replaced.abort();
    }
    const slot: StreamSlot = { client, replaced: new AbortController() };
    this.#byClient.set(client, [...(this.#byClient.get(client) ?? []), slot]);
    this.#count++;
    return slot;
  }

  /** Gives a place back (idempotent). */
  give(slot: StreamSlot): void {
    const own = this.#byClient.get(slot.client);
    const at = own?.indexOf(slot) ?? -1;
    if (!own || at < 0) return;
    own.splice(at, 1);
    this.#count--;
    if (own.length === 0) this.#byClient.delete(slot.client);
  }
}

/** The stream places of each console (keyed by the console's closing signal, one per handler). */
const slotsByConsole = new WeakMap<AbortSignal, StreamSlots>();

/**
 * `GET /jobs/events?page=N`: a `snapshot` event of the page's jobs, then a `job` event per change; a
 * `replaced` event ends a stream whose place another took (the page's script then stops listening).
 */
export const jobsStreamRoute: ConsoleRoute = {
  method: "GET",
  pattern: "/jobs/events",
  async handle(request, context) {
    const page = pageParam(request.url);
    let slots = slotsByConsole.get(context.signal);
    if (!slots) {
      slots = new StreamSlots();
      slotsByConsole.set(context.signal, slots);
    }
    const slot = slots.take(request.client);
    if (!slot) {
      return {
        kind: "file",
        status: 503,
        contentType: "text/plain; charset=utf-8",
        body: `${MAX_JOB_STREAMS} live job streams are open already; reload the page to see the jobs as they are.\n`,
        headers: { "Retry-After": "10" },
      };
    }
    const taken = slots;
    return {
      kind: "stream",
      run: (response) =>
        streamJobs(response, context, page, slot.replaced.signal).finally(() => taken.give(slot)),
    };
  },
};

async function streamJobs(
  response: ServerResponse,
  context: { governance: Governance; clock: Clock; signal: AbortSignal },
  page: number,
  replaced: AbortSignal,
): Promise<void> {
  const { governance, clock } = context;
  const gone = new AbortController();
  response.once("close", () => gone.abort());
  const stop = AbortSignal.any([context.signal, gone.signal, replaced]);
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
    if (replaced.aborted && !gone.signal.aborted) {
      response.write("event: replaced\ndata: {}\n\n");
    }
    response.end();
  }
}

/** What makes a job worth an event: its status, its bytes or its last change. */
function changeKey(job: DownloadJob): string {
  return `${job.status}|${job.bytesDownloaded}|${job.updatedAt}|${job.attempts}`;
}
