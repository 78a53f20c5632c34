/**
 * What the offline demo's scripted model does, as a function of the conversation (like a real model,
 * it reads earlier tool results, so it passes the real invocation, candidate and job ids on):
 * tool_search → a parallel pair of searches → an arXiv lookup → the download candidate →
 * artifact_download → paper_extract_pdf in the next turn → an answer citing every fact.
 * A refused or failed step (say, a denied card) skips what depends on it.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { McpRecord, McpToolResult } from "sciencegate";
import type { DownloadResult, PaperExtractResult } from "sciencegate/artifacts";
import { hasCalled, lastToolResult, type ScriptedReply } from "sciencegate/testing";
import { shortLabel } from "./describe-message.js";

/** The user's question; its keywords auto-promote the PubMed, Europe PMC and arXiv searches. */
export const DEMO_QUESTION =
  "Find PubMed literature on CRISPR base editing, and read the arXiv preprint 2403.01234 in full";

const LOOKUP = "mcp__arxiv__lookup";
const PREPARE = "mcp__arxiv__prepare_paper_download";

/**
 * The next reply of the scripted model.
 * @param messages everything the model was sent so far
 * @returns tool calls, or the final answer
 */
export function paperAgentScript(messages: BaseMessage[]): ScriptedReply {
  const result = (name: string) => lastToolResult<McpToolResult & { invocationId: string }>(messages, name);
  const call = (name: string, args: Record<string, unknown>): ScriptedReply => ({
    toolCalls: [{ name, args }],
  });
  if (!hasCalled(messages, "tool_search")) {
    return call("tool_search", { query: `select:${LOOKUP},${PREPARE}` });
  }
  if (!hasCalled(messages, "mcp__pubmed__search")) {
    return {
      toolCalls: [
        { name: "mcp__pubmed__search", args: { query: "crispr base editing", max_results: 2 } },
        { name: "mcp__europe-pmc__search", args: { query: "crispr base editing" } },
      ],
    };
  }
  if (!hasCalled(messages, LOOKUP)) return call(LOOKUP, { ids: ["arXiv:2403.01234"] });
  const paper = result(LOOKUP)?.records[0];
  if (paper && !hasCalled(messages, PREPARE)) return call(PREPARE, { id: paper.identifier });
  const plan = result(PREPARE);
  const candidate = plan?.artifacts?.[0];
  if (plan && candidate && !hasCalled(messages, "artifact_download")) {
    return call("artifact_download", {
      mcpInvocationId: plan.invocationId,
      candidateId: candidate.candidateId,
    });
  }
  const download = lastToolResult<DownloadResult>(messages, "artifact_download");
  if (download?.status === "completed" && !hasCalled(messages, "paper_extract_pdf")) {
    return call("paper_extract_pdf", { artifactJobId: download.jobId });
  }
  return { text: finalAnswer(messages) };
}

/** One fact per line, each with the citation label of the record it comes from. */
function finalAnswer(messages: BaseMessage[]): string {
  const first = (name: string) => lastToolResult<McpToolResult>(messages, name)?.records[0];
  const facts: string[] = [];
  const title = (record: McpRecord) => `"${record.title.replace(/\.$/, "")}"`;
  const pubmed = first("mcp__pubmed__search");
  if (pubmed)
    facts.push(`PubMed: ${title(pubmed)}${pubmed.year ? ` (${pubmed.year})` : ""} ${shortLabel(pubmed)}.`);
  const europe = first("mcp__europe-pmc__search");
  if (europe) facts.push(`Europe PMC: ${title(europe)} ${shortLabel(europe)}.`);
  const paper = first(LOOKUP);
  if (paper)
    facts.push(`arXiv: ${title(paper)} is a preprint, not peer-reviewed by arXiv ${shortLabel(paper)}.`);
  const extraction = lastToolResult<PaperExtractResult>(messages, "paper_extract_pdf");
  if (paper && extraction) {
    facts.push(
      `Its full text was read: ${extraction.pageCount} pages extracted to fulltext.md ${shortLabel(paper)}.`,
    );
  }
  return facts.length ? facts.map((fact) => `- ${fact}`).join("\n") : "No governed source answered.";
}
