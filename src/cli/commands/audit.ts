import type { CliIo, ExitCode } from "../io.js";
import type { CliRuntime } from "../runtime.js";

/**
 * `sciencegate audit`: the ledger rows of a session (or all) and a summary.
 * @returns 0
 */
export async function auditCommand(
  runtime: CliRuntime,
  io: CliIo,
  options: { session?: string; json: boolean; limit: number },
): Promise<ExitCode> {
  const ledger = runtime.ledger;
  const scope = options.session === undefined ? {} : { sessionId: options.session };
  const rows = await ledger.query({ ...scope, limit: options.limit, order: "desc" });
  const summary = await ledger.summary(scope);
  if (options.json) {
    io.stdout(`${JSON.stringify({ summary, invocations: rows }, null, 2)}\n`);
    return 0;
  }
  io.stdout(
    `${summary.calls} call(s): ${summary.ok} ok, ${summary.errors} error(s), ${summary.cacheHits} cache hit(s), queue wait ${summary.totalQueueWaitMs} ms\n`,
  );
  for (const [code, n] of Object.entries(summary.byErrorCode)) io.stdout(`  ${code}: ${n}\n`);
  for (const r of rows) {
    const outcome = r.status === "ok" ? (r.cacheHit ? "ok (cache)" : "ok") : `${r.error?.code ?? "error"}`;
    io.stdout(
      `${r.startedAt}  ${r.sessionId.padEnd(10)} ${`${r.sourceId}/${r.toolId}`.padEnd(36)} ${outcome.padEnd(22)} attempts=${r.attempts} ${r.durationMs}ms ${r.invocationId}\n`,
    );
  }
  return 0;
}
