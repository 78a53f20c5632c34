import { randomUUID } from "node:crypto";
import { callTimeoutMs, resolveToolName } from "../../adk/index.js";
import { GovernanceError, isGovernanceError, toErrorBody } from "../../core/index.js";
import type { CliIo, ExitCode } from "../io.js";
import type { CliRuntime } from "../runtime.js";
import { type ApproveChoice, askInTerminal } from "../terminal-approval.js";
import { terminalLine } from "../terminal-text.js";
import { approveCliCall } from "./approve-call.js";

/** Options of `sciencegate call`. */
export interface CallOptions {
  name: string;
  args: string;
  session: string;
  json: boolean;
  /** `--approve`: the answer to a permission card, for scripts (without it a TTY is asked). */
  approve?: ApproveChoice;
  /** Source ids to switch on for the session before the call (`--enable-source`, e.g. `llm-wiki`). */
  enableSources?: readonly string[];
}

/** The CLI's streams plus the input an approval prompt reads. @default process.stdin */
export type CallIo = CliIo & { stdin?: NodeJS.ReadableStream };

/**
 * `sciencegate call`: one governed call through the broker, recorded in the ledger. A dangerous
 * call asks in a TTY, takes `--approve` when scripted, and is otherwise refused (exit 1).
 * @returns 0 on success, 1 when the call failed (the structured error is printed), 2 on bad usage
 */
export async function callCommand(runtime: CliRuntime, io: CallIo, options: CallOptions): Promise<ExitCode> {
  let input: unknown;
  try {
    input = JSON.parse(options.args);
  } catch (error) {
    io.stderr(
      terminalLine`sciencegate call: --args is not valid JSON (${(error as Error).message}). Example: --args '{"query":"brca1"}'\n`,
    );
    return 2;
  }
  const broker = runtime.broker;
  let target: string | undefined;
  try {
    for (const sourceId of options.enableSources ?? []) {
      if (!runtime.registry.has(sourceId)) {
        throw new GovernanceError(
          "UNKNOWN_ID",
          `--enable-source ${sourceId}: no source has that id. Run 'sciencegate tools' to list the sources.`,
        );
      }
      await runtime.sessions.enableSource(options.session, sourceId);
    }
    const { sourceId, toolId } = resolveToolName(runtime.catalog, options.name);
    target = sourceId;
    const call = {
      sourceId,
      toolId,
      input,
      sessionId: options.session,
      toolCallId: `cli-${randomUUID()}`,
      timeoutMs: callTimeoutMs(runtime.science),
    };
    await approveCliCall(runtime, call, {
      ...(options.approve ? { approve: options.approve } : {}),
      ...(io.isTty
        ? { ask: (card) => askInTerminal(card, { input: io.stdin ?? process.stdin, write: io.stderr }) }
        : {}),
    });
    const outcome = await broker.invoke(call);
    if (options.json) {
      io.stdout(`${JSON.stringify(outcome, null, 2)}\n`);
      return 0;
    }
    const r = outcome.result;
    // Everything below but the counts is the server's text: each field printed inert on its line.
    io.stdout(
      terminalLine`invocation ${outcome.invocationId} (${outcome.cacheHit ? "cache hit" : `${outcome.attempts} attempt(s)`}, queue ${outcome.queueWaitMs} ms)\n`,
    );
    io.stdout(terminalLine`source ${r.sourceId} · licence ${r.license} · ${r.attribution}\n`);
    for (const record of r.records) {
      io.stdout(terminalLine`- ${record.primaryCitation.label} ${record.title} [${record.contentScope}]\n`);
    }
    for (const a of r.artifacts ?? [])
      io.stdout(terminalLine`- candidate ${a.candidateId}: ${a.format} ${a.kind} ${a.url}\n`);
    if (r.data) io.stdout(terminalLine`data: ${JSON.stringify(r.data).slice(0, 400)}\n`);
    for (const w of r.warnings) io.stdout(terminalLine`warning: ${w}\n`);
    return 0;
  } catch (error) {
    if (!isGovernanceError(error)) throw error;
    const body = toErrorBody(error);
    if (body.code === "SOURCE_DISABLED" && target !== undefined) body.message += howToEnable(runtime, target);
    if (options.json) io.stdout(`${JSON.stringify({ error: body }, null, 2)}\n`);
    // The message may be a server's own error text: one line, inert.
    io.stderr(
      terminalLine`sciencegate call: ${body.code}: ${body.message}${body.retryable ? " (retryable)" : ""}\n`,
    );
    return 1;
  }
}

/** The fix of a `SOURCE_DISABLED` call: the config field of a disabled server, else `--enable-source`. */
function howToEnable(runtime: CliRuntime, sourceId: string): string {
  const source = runtime.catalog.source(sourceId);
  if (source?.status === "disabled") {
    const file = runtime.config.path ?? runtime.configSource;
    return ` To enable it, set "enabled": true for mcpServers.${source.serverId} in ${file}.`;
  }
  return (
    ` To enable it for this call, add --enable-source ${sourceId} ` +
    `(in code: governance.sessions.enableSource(session, "${sourceId}")).`
  );
}
