/**
 * The Downloads page: every download job, newest first, with its progress (live through
 * `GET /jobs/events`, see `jobs-stream.ts`), its error and the invocation that offered its candidate;
 * Cancel and Retry for the jobs they apply to, each audited as an operator change.
 */
import { cancelStoredJob, type DownloadJob, unknownJob } from "../artifacts/index.js";
import type { McpToolResult } from "../contract/index.js";
import { GovernanceError } from "../core/index.js";
import type { Governance } from "../runtime/index.js";
import { recordConsoleChange } from "./console-audit.js";
import { html, type SafeHtml } from "./console-html.js";
import { pageParam, pager } from "./console-paging.js";
import type { ConsoleContext, ConsoleRoute } from "./console-route.js";
import { bytes, notice, postForm, time } from "./console-ui.js";
import { jobEvent, jobsPage, jobsStreamRoute } from "./jobs-stream.js";

/** The `toolId` of the audit rows of job actions. */
const DOWNLOAD_TOOL_ID = "artifact_download";
/** How long a Retry waits to see the job start again (or be refused) before it answers. */
const RETRY_START_WAIT_MS = 2_000;

const DONE: Record<string, string> = {
  cancelled: "The job was cancelled.",
  ended: "The job had already ended; nothing was cancelled.",
  retrying: "The job runs again; its progress shows below.",
};

/** `GET /jobs`, `GET /jobs/events`, `POST /jobs/:id/cancel`, `POST /jobs/:id/retry`. */
export const jobsRoutes: readonly ConsoleRoute[] = [
  {
    method: "GET",
    pattern: "/jobs",
    async handle(request, context) {
      const list = jobsPage(await context.governance.downloads.list(), pageParam(request.url));
      const sizes = await candidateSizes(context.governance, list.items);
      const events = context.href("/jobs/events", { page: list.page === 1 ? undefined : list.page });
      const body = html`${notice(DONE, request.url.searchParams.get("done"))}
<p class="muted">${list.total.toLocaleString("en")} download job${list.total === 1 ? "" : "s"}, newest first. Progress follows live while this page is open.</p>
<p class="notice" data-jobs-new hidden>New jobs have started: <a href="${context.href("/jobs")}">reload</a> to see them.</p>
${
  list.total === 0
    ? html`<p class="muted" id="jobs-empty">No download jobs yet: <code>artifact_download</code> starts one.</p>`
    : html`<div class="table-wrap"><table id="jobs" data-job-events="${events}">
<thead><tr><th>Job</th><th>Source and record</th><th>Destination</th><th>Status</th><th>Progress</th><th>Offered by</th><th>Session and thread</th><th>Actions</th></tr></thead>
<tbody>${list.items.map((job) => jobRow(context, job, sizes.get(job.jobId)))}</tbody>
</table></div>`
}
${pager(context, "/jobs", list)}`;
      return { kind: "page", title: "Downloads", section: "jobs", body };
    },
  },
  jobsStreamRoute,
  {
    method: "POST",
    pattern: "/jobs/:id/cancel",
    writes: true,
    async handle(request, context) {
      const { governance } = context;
      const job = await requireJob(governance, request.params.id ?? "");
      if (!jobEvent(job).cancellable) {
        throw new GovernanceError(
          "INVALID_INPUT",
          `Job ${job.jobId} is ${job.status}; only a job that has not ended can be cancelled.`,
          { data: { jobId: job.jobId, status: job.status } },
        );
      }
      // A job running in another process (the app, while this console runs on its own) is stopped by
      // that process when it sees its row marked; it writes the job's ledger row itself.
      const after = governance.downloads.isRunning(job.jobId)
        ? await governance.downloads.cancel(job.jobId)
        : (
            await cancelStoredJob(governance.downloads.jobs, job.jobId, {
              error: new GovernanceError("CANCELLED", "Cancelled from the Sciencegate console."),
              now: context.clock.now(),
            })
          ).job;
      if (after.status !== "cancelled") return { kind: "redirect", location: "/jobs?done=ended" };
      await recordConsoleChange(governance, change(job, "cancel_job"), {
        clock: context.clock,
        actor: request.principal,
      });
      return { kind: "redirect", location: "/jobs?done=cancelled" };
    },
  },
  {
    method: "POST",
    pattern: "/jobs/:id/retry",
    writes: true,
    async handle(request, context) {
      const { governance, clock } = context;
      const job = await requireJob(governance, request.params.id ?? "");
      if (!jobEvent(job).retryable) {
        throw new GovernanceError(
          "INVALID_INPUT",
          `Job ${job.jobId} is ${job.status}; only a failed or cancelled job can be retried.`,
          { data: { jobId: job.jobId, status: job.status } },
        );
      }
      // The transfer may take minutes: the answer waits only until the job has started again (or was
      // refused: a refusal then shows here); a later failure ends the job itself, shown on the page.
      let answered = false;
      const run = governance.downloads.retry(job.jobId);
      run.catch((error: unknown) => {
        if (answered)
          process.stderr.write(`sciencegate console: retry of job ${job.jobId}: ${String(error)}\n`);
      });
      const waiting = new AbortController();
      try {
        await Promise.race([run, startedAgain(governance, job, clock, waiting.signal)]);
      } finally {
        waiting.abort();
      }
      answered = true;
      await recordConsoleChange(governance, change(job, "retry_job"), { clock, actor: request.principal });
      return { kind: "redirect", location: "/jobs?done=retrying" };
    },
  },
];

function change(job: DownloadJob, action: "cancel_job" | "retry_job") {
  return {
    sessionId: job.sessionId,
    sourceId: job.sourceId,
    toolId: DOWNLOAD_TOOL_ID,
    action,
    resource: `job:${job.jobId}`,
  };
}

async function requireJob(governance: Governance, jobId: string): Promise<DownloadJob> {
  const job = await governance.downloads.jobs.get(jobId);
  if (job === undefined) throw unknownJob(jobId);
  return job;
}

/**
 * Resolves once the stored job has moved on from `before` (queued again), after the wait, or when
 * `signal` aborts; never rejects (a store that fails here fails the retry itself too).
 */
async function startedAgain(
  governance: Governance,
  before: DownloadJob,
  clock: ConsoleContext["clock"],
  signal: AbortSignal,
): Promise<void> {
  const deadline = clock.now() + RETRY_START_WAIT_MS;
  while (clock.now() < deadline) {
    await clock.sleep(20, signal).catch(() => undefined);
    if (signal.aborted) return;
    const current = await governance.downloads.jobs.get(before.jobId).catch(() => undefined);
    if (current === undefined || current.status !== before.status || current.updatedAt !== before.updatedAt)
      return;
  }
}

function jobRow(context: ConsoleContext, job: DownloadJob, size: number | undefined): SafeHtml {
  const state = jobEvent(job);
  const encoded = encodeURIComponent(job.jobId);
  const action = (name: "cancel" | "retry", shown: boolean, form: SafeHtml) =>
    html`<span data-job-action="${name}"${shown ? "" : html` hidden`}>${form}</span>`;
  return html`<tr id="job-${job.jobId}" data-job-id="${job.jobId}" data-status="${job.status}">
<td><code>${job.jobId}</code><div class="muted">created ${time(job.createdAt)}</div><div class="muted">updated <span data-job-updated>${time(job.updatedAt)}</span></div></td>
<td>${job.sourceId}<div class="mono muted">${job.sourceRecordId}</div></td>
<td><code>${job.destinationPath}</code></td>
<td><span class="badge badge-${state.tone}" data-job-status>${job.status}</span><div class="job-error" data-job-error>${state.error ? html`<code>${state.error.code}</code> ${state.error.message}` : ""}</div></td>
<td><div class="progress-cell">${progress(job, size)} <span data-job-bytes>${bytesText(job.bytesDownloaded, size)}</span></div><div class="muted">attempts <span data-job-attempts>${job.attempts}</span></div></td>
<td><a href="${context.href(`/invocations/${encodeURIComponent(job.mcpInvocationId)}`)}"><code>${job.mcpInvocationId}</code></a><div class="muted">candidate <code>${job.candidateId}</code></div></td>
<td><code>${job.sessionId}</code>${job.threadId ? html`<div class="muted">thread <code>${job.threadId}</code></div>` : ""}</td>
<td class="actions">${action(
    "cancel",
    state.cancellable,
    postForm(
      context,
      `/jobs/${encoded}/cancel`,
      "Cancel",
      {},
      { danger: true, confirm: "Cancel this download?" },
    ),
  )}${action("retry", state.retryable, postForm(context, `/jobs/${encoded}/retry`, "Retry"))}</td>
</tr>`;
}

/** The bar: against the candidate's size when known, full when done, else indeterminate while it runs. */
function progress(job: DownloadJob, size: number | undefined): SafeHtml {
  const label = `Downloaded ${bytesText(job.bytesDownloaded, size)}`;
  if (size !== undefined) {
    return html`<progress data-job-progress data-size="${size}" max="${size}" value="${Math.min(job.bytesDownloaded, size)}" aria-label="${label}"></progress>`;
  }
  if (job.status === "completed") {
    const full = Math.max(job.bytesDownloaded, 1);
    return html`<progress data-job-progress max="${full}" value="${full}" aria-label="${label}"></progress>`;
  }
  return html`<progress data-job-progress aria-label="${label}"></progress>`;
}

function bytesText(downloaded: number, size: number | undefined): string {
  return size === undefined ? bytes(downloaded) : `${bytes(downloaded)} of ${bytes(size)}`;
}

/**
 * Each job's candidate size (`sizeBytes`), read from the result of the invocation that offered it;
 * absent when the candidate named none or the result cannot be read.
 */
async function candidateSizes(
  governance: Governance,
  jobs: readonly DownloadJob[],
): Promise<Map<string, number>> {
  const results = new Map<string, Promise<McpToolResult | undefined>>();
  const sizes = new Map<string, number>();
  for (const job of jobs) {
    let result = results.get(job.mcpInvocationId);
    if (result === undefined) {
      result = offeredResult(governance, job.mcpInvocationId);
      results.set(job.mcpInvocationId, result);
    }
    const candidate = (await result)?.artifacts?.find((item) => item.candidateId === job.candidateId);
    const size = candidate?.sizeBytes;
    if (typeof size === "number" && Number.isSafeInteger(size) && size > 0) sizes.set(job.jobId, size);
  }
  return sizes;
}

async function offeredResult(
  governance: Governance,
  invocationId: string,
): Promise<McpToolResult | undefined> {
  const row = await governance.ledger.get(invocationId);
  if (row?.normalizedRef === undefined) return undefined;
  try {
    return await governance.store.getJson<McpToolResult>(row.normalizedRef);
  } catch {
    // A missing or unreadable result only hides the size; the integrity check reports the object.
    return undefined;
  }
}
