import type { DownloadResult } from "../../artifacts/index.js";
import {
  cancelStoredJob,
  type DownloadJob,
  type DownloadJobStore,
  downloadJobsPath,
  PostgresDownloadJobStore,
  SqliteDownloadJobStore,
} from "../../artifacts/index.js";
import { recordConsoleChange } from "../../console/index.js";
import { GovernanceError, type PostgresDatabase, systemClock } from "../../core/index.js";
import { resolveDataDir } from "../../runtime/index.js";
import type { CliIo, ExitCode } from "../io.js";
import { CLI_DECISION_SOURCE, recordCliChange } from "../operator-audit.js";
import { openRuntime } from "../runtime.js";
import { withStateStore } from "../state-store.js";
import { terminalLine } from "../terminal-text.js";

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
 * `sciencegate jobs [list|cancel ID|retry ID] [--json]`: the download jobs of the data directory, or of
 * the database `SCIENCEGATE_DATABASE_URL` names.
 * `list` and `cancel` need no MCP server; `cancel` marks the job's row cancelled: a job another process
 * left unfinished ends there, and a job running in another process stops at its next progress tick
 * (`progressPersistMs`), removes its partial file and writes its ledger row. `retry` starts the
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
  const openers = {
    path,
    sqlite: (file: string): Promise<DownloadJobStore> => SqliteDownloadJobStore.open(file),
    postgres: (db: PostgresDatabase): Promise<DownloadJobStore> => PostgresDownloadJobStore.open(db),
  };
  return withStateStore(io, openers, options.action === "list", async (store) => {
    if (options.action === "list") return printJobs(io, store ? await store.list() : [], options.json);
    return cancel(io, store as DownloadJobStore, options);
  });
}

async function cancel(io: CliIo, store: DownloadJobStore, options: JobsCommandOptions): Promise<ExitCode> {
  const { job, cancelled } = await cancelStoredJob(store, options.id ?? "", {
    error: new GovernanceError("CANCELLED", "Cancelled with sciencegate jobs cancel."),
    now: systemClock.now(),
  });
  if (cancelled) await recordCliChange(io, jobChange(job, "cancel_job"));
  if (options.json) io.stdout(`${JSON.stringify({ job }, null, 2)}\n`);
  else if (!cancelled)
    io.stdout(terminalLine`Job ${job.jobId} is already ${job.status}; nothing to cancel.\n`);
  else io.stdout(terminalLine`Cancelled job ${job.jobId} (${job.destinationPath}).\n`);
  return 0;
}

async function retry(io: CliIo, options: JobsCommandOptions): Promise<ExitCode> {
  // A recorded job may be of any source the app ever used: its manifest (hosts, licence) is needed
  // whether or not the config runs its server now.
  const runtime = await openRuntime(io, {
    builtinManifests: true,
    ...(options.configPath ? { configPath: options.configPath } : {}),
  });
  let result: DownloadResult;
  try {
    result = await runtime.downloads.retry(options.id ?? "");
    const job = await runtime.downloads.jobs.get(result.jobId);
    if (job) {
      await recordConsoleChange(runtime, jobChange(job, "retry_job"), {
        decisionSource: CLI_DECISION_SOURCE,
      });
    }
  } finally {
    await runtime.close();
  }
  if (options.json) io.stdout(`${JSON.stringify({ result }, null, 2)}\n`);
  else {
    const tail = result.status === "completed" ? ` ${result.actualChecksum} ${result.finalPath}` : "";
    io.stdout(
      terminalLine`Job ${result.jobId}: ${result.status}${tail}${result.error ? ` (${result.error.message})` : ""}\n`,
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
  // A destination is the model's choice and an error a server's text: printed inert.
  for (const job of jobs) {
    const error = job.error ? ` ${job.error.code}: ${job.error.message}` : "";
    io.stdout(
      terminalLine`${job.jobId}  ${job.status.padEnd(9)}  ${job.bytesDownloaded} B  ${job.destinationPath}${error}\n`,
    );
  }
  return 0;
}

/** The audit row's fields for a change to a job. */
function jobChange(job: DownloadJob, action: "cancel_job" | "retry_job") {
  return {
    sessionId: job.sessionId,
    sourceId: job.sourceId,
    toolId: "artifact_download",
    action,
    resource: `job:${job.jobId}`,
  };
}
