import { checkStoreIntegrity } from "../../governance/audit/index.js";
import type { CliIo, ExitCode } from "../io.js";
import type { CliRuntime } from "../runtime.js";
import { terminalLine } from "../terminal-text.js";

/**
 * `sciencegate audit`: the ledger rows of a session (or all) and a summary; with `--verify`, the
 * check of every row's CAS references and every stored object (see `checkStoreIntegrity`) instead.
 * @returns 0, or 1 when `--verify` finds a missing or corrupt object
 */
export async function auditCommand(
  runtime: CliRuntime,
  io: CliIo,
  options: { session?: string; json: boolean; limit: number; verify?: boolean },
): Promise<ExitCode> {
  if (options.verify) return verifyStores(runtime, io, options.json);
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
  for (const [code, n] of Object.entries(summary.byErrorCode)) io.stdout(terminalLine`  ${code}: ${n}\n`);
  // Session, thread, source and tool ids are whatever callers and servers sent: printed inert.
  for (const r of rows) {
    const outcome = r.status === "ok" ? (r.cacheHit ? "ok (cache)" : "ok") : `${r.error?.code ?? "error"}`;
    io.stdout(
      terminalLine`${r.startedAt}  ${r.sessionId.padEnd(10)} ${`${r.sourceId}/${r.toolId}`.padEnd(36)} ${outcome.padEnd(22)} attempts=${r.attempts} ${r.durationMs}ms ${r.invocationId}\n`,
    );
  }
  return 0;
}

async function verifyStores(runtime: CliRuntime, io: CliIo, json: boolean): Promise<ExitCode> {
  const report = await checkStoreIntegrity(runtime);
  if (json) {
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    return report.ok ? 0 : 1;
  }
  io.stdout(
    `${report.rows} ledger row(s), ${report.refs} CAS reference(s) (${report.inlineRefs} in the ledger, ${report.refs - report.inlineRefs} in the CAS): ${report.missing.length} missing, ${report.corrupt.length} corrupt; ${report.removedTempFiles} temp file(s) of dead writers removed\n`,
  );
  for (const { invocationId, ref } of report.missing)
    io.stdout(terminalLine`  missing ${ref} (invocation ${invocationId})\n`);
  for (const ref of report.corrupt) io.stdout(terminalLine`  corrupt ${ref}\n`);
  io.stdout(report.ok ? "ok: every reference is stored and verifies\n" : "FAILED: see the objects above\n");
  return report.ok ? 0 : 1;
}
