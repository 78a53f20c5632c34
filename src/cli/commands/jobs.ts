import { existsSync } from "node:fs";
import type { DownloadResult } from "../../artifacts/index.js";
import {
  type DownloadJob,
  downloadJobsPath,
  SqliteDownloadJobStore,
  TERMINAL_DOWNLOAD_STATES,
  unknownJob,
} from "../../artifacts/index.js";
import { GovernanceError } from "../../core/index.js";
import { resolveDataDir } from "../../runtime/index.js";
import type { CliIo, ExitCode } from "../io.js";
import { openRuntime } from "../runtime.js";

/** Options of `sciencegate jobs`. */
export interface JobsCommandOptions {
  /** `list` (default), `cancel` or `retry`. */
  action: "list" | "cancel" | "retry";
  /** The job to cancel or retry. */
  id?: string;
  /** The config `retry` starts the runtime with (the candidate is re-checked against the live catalog). */
  configPath?: string;
  json: boolean;
}

/**
 * `sciencegate jobs [list|cancel ID|retry ID] [--json]`: the download jobs of the data directory.
 * `list` and `cancel` need no MCP server; `cancel` ends a job another process left unfinished (a job
 * running inside an app is cancelled through `governance.downloads.cancel`). `retry` starts the
 * governed runtime and downloads a failed or cancelled job again, waiting for its terminal state.
 * @param io streams, environment and working directory
 * @param options the subcommand, job id, config and output format
 * @returns 0, or 1 when a retried job did not complete
 * @throws GovernanceError `UNKNOWN_ID` for an unknown job; `INVALID_INPUT` when retrying a job that is
 *   neither failed nor cancelled
 */
export async function jobsCommand(io: CliIo, options: JobsCommandOptions): Promise<ExitCode> {
  const path = downloadJobsPath(resolveDataDir({ env: io.env, cwd: io.cwd }));
  if (options.action === "retry") return retry(io, options);
  // Listing an empty data directory must not create one.
  if (options.action === "list" && !existsSync(path)) return printJobs(io, [], options.json);
  const store = await SqliteDownloadJobStore.open(path);
  try {
    if (options.action === "list") return printJobs(io, await store.list(), options.json);
    const id = options.id ?? "";
    const job = await store.get(id);
    if (job === undefined) throw unknownJob(id);
    let cancelled = job;
    if (!TERMINAL_DOWNLOAD_STATES.includes(job.status)) {
      const error = new GovernanceError("CANCELLED", "Cancelled with sciencegate jobs cancel.");
      cancelled = {
        ...job,
        status: "cancelled",
        error: { code: error.code, message: error.message, retryable: false },
      };
      await store.update(cancelled);
    }
    if (options.json) io.stdout(`${JSON.stringify({ job: cancelled }, null, 2)}\n`);
    else if (cancelled === job) io.stdout(`Job ${job.jobId} is already ${job.status}; nothing to cancel.\n`);
    else io.stdout(`Cancelled job ${job.jobId} (${job.destinationPath}).\n`);
    return 0;
  } finally {
    await store.close();
  }
}

async function retry(io: CliIo, options: JobsCommandOptions): Promise<ExitCode> {
  const runtime = await openRuntime(io, options.configPath ? { configPath: options.configPath } : {});
  let result: DownloadResult;
  try {
    result = await runtime.downloads.retry(options.id ?? "");
  } finally {
    await runtime.close();
  }
  if (options.json) io.stdout(`${JSON.stringify({ result }, null, 2)}\n`);
  else {
    const tail = result.status === "completed" ? ` ${result.actualChecksum} ${result.finalPath}` : "";
    io.stdout(
      `Job ${result.jobId}: ${result.status}${tail}${result.error ? ` (${result.error.message})` : ""}\n`,
    );
  }
  return result.status === "completed" ? 0 : 1;
}

function printJobs(io: CliIo, jobs: DownloadJob[], json: boolean): ExitCode {
  if (json) {
    io.stdout(`${JSON.stringify({ jobs }, null, 2)}\n`);
    return 0;
  }
  if (jobs.length === 0) {
    io.stdout("No download jobs.\n");
    return 0;
  }
  for (const job of jobs) {
    const error = job.error ? ` ${job.error.code}: ${job.error.message}` : "";
    io.stdout(
      `${job.jobId}  ${job.status.padEnd(9)}  ${job.bytesDownloaded} B  ${job.destinationPath}${error}\n`,
    );
  }
  return 0;
}
