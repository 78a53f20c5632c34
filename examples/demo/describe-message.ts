/**
 * One readable line per fact of an agent message: the model's tool calls, and what each tool
 * answered (records, candidates, the download, the extraction with the first lines of its text).
 */
import { readFile } from "node:fs/promises";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { McpRecord, McpToolResult } from "sciencegate";
import type {
  ArtifactDownloadProgressEvent,
  DownloadResult,
  PaperExtractResult,
} from "sciencegate/artifacts";
import { toolResultBody } from "sciencegate/testing";
import { formatArgs, formatBytes, shortId } from "./print.js";

/**
 * The lines of one message. A final answer (an AI message without tool calls) gives none: the demo
 * prints it with its citation check.
 * @param message a message of the thread
 * @returns indented lines to print
 */
export async function describeMessage(message: BaseMessage): Promise<string[]> {
  if (AIMessage.isInstance(message)) {
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) return [];
    // A live model often says what it is about to do; one line of it is enough.
    const said = message.text.trim() ? [`  model: ${message.text.trim().split("\n")[0]?.slice(0, 100)}`] : [];
    if (calls.length === 1)
      return [...said, `  model → ${calls[0]?.name} ${formatArgs(calls[0]?.args ?? {})}`];
    return [
      ...said,
      `  model → ${calls.length} calls in one turn (one task each, in parallel):`,
      ...calls.map((call) => `    ${call.name} ${formatArgs(call.args)}`),
    ];
  }
  if (!ToolMessage.isInstance(message)) return [];
  const body = toolResultBody(message) ?? {};
  if (message.status === "error") {
    return [
      `    ← ${message.name}: ${String(body.code ?? "error")}: ${String(body.message ?? message.text)}`,
    ];
  }
  if (message.name === "tool_search") {
    const names = ((body.results ?? []) as { name: string }[]).map((r) => r.name);
    return [`    ← tool_search promoted ${names.join(", ") || "nothing"} (schemas bound next turn)`];
  }
  if (message.name === "artifact_download") return describeDownload(body as unknown as DownloadResult);
  if (message.name === "paper_extract_pdf") return describeExtraction(body as unknown as PaperExtractResult);
  return describeResult(message, body as unknown as McpToolResult & { invocationId: string });
}

/**
 * One progress line of a download.
 * @param event the custom-stream event of `artifact_download`
 * @returns the line
 */
export function describeProgress(event: ArtifactDownloadProgressEvent): string {
  const total = event.totalBytes === undefined ? "" : ` of ${formatBytes(event.totalBytes)}`;
  return `    ⇣ progress ${shortId(event.jobId)} ${event.status} ${formatBytes(event.bytesDownloaded)}${total}`;
}

/**
 * The short citation label of a record, e.g. `[PMID:39000001]` out of its markdown link.
 * @param record a normalized record
 * @returns the bracketed label
 */
export function shortLabel(record: McpRecord): string {
  return /^\[[^\]]+\]/.exec(record.primaryCitation.label)?.[0] ?? `[${record.identifier}]`;
}

function describeResult(message: ToolMessage, body: McpToolResult & { invocationId: string }): string[] {
  const cached = (message.artifact as { cacheHit?: boolean } | undefined)?.cacheHit ? ", cache hit" : "";
  const records = body.records ?? [];
  const whole = JSON.stringify(body).length.toLocaleString("en-US");
  const lines = [
    `    ← ${message.name}: ${records.length} record(s) (invocation ${shortId(body.invocationId)}${cached})`,
    `      the model reads ${message.text.length.toLocaleString("en-US")} characters of text; the whole result (${whole} characters of JSON) is the message's artifact`,
  ];
  for (const record of records.slice(0, 2)) {
    lines.push(`      ${shortLabel(record)} ${record.title.slice(0, 70)} [${record.contentScope}]`);
  }
  for (const candidate of body.artifacts ?? []) {
    lines.push(
      `      candidate ${candidate.candidateId}: ${candidate.kind} ${candidate.format} ← ${candidate.url}`,
    );
  }
  return lines;
}

function describeDownload(result: DownloadResult): string[] {
  if (result.status !== "completed") {
    return [
      `    ← artifact_download ${result.status}: ${result.error?.code ?? ""} ${result.error?.message ?? ""}`,
    ];
  }
  return [
    `    ← artifact_download completed: ${formatBytes(result.bytesDownloaded)}, job ${shortId(result.jobId)}, ${result.actualChecksum?.slice(0, 19) ?? ""}…`,
    `      saved (read-only) at ${result.finalPath}`,
  ];
}

async function describeExtraction(result: PaperExtractResult): Promise<string[]> {
  const text = await readFile(result.textPath, "utf8").catch(() => "");
  const firstLines = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .slice(0, 3);
  return [
    `    ← paper_extract_pdf: ${result.pageCount} pages extracted (job ${shortId(result.artifactJobId)})`,
    `      fulltext.md: ${result.textPath}`,
    ...result.warnings.map((warning) => `      warning: ${warning}`),
    ...firstLines.map((line) => `      | ${line.slice(0, 100)}`),
  ];
}
