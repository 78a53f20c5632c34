/** The `tool_use_verified` gate: every node that declared tools made at least one successful call of them. */

import type { InvocationRecord, Ledger } from "../governance/audit/index.js";
import { derivedSourceId } from "../governance/manifests/index.js";

/** A node (or agent) of a workflow, as written in `workflow.json`. */
export interface ToolDeclaration {
  id: string;
  kind?: string;
  /** Tools the node promises to call: `provider.tool` or bare names. */
  tools?: string[];
}

/** One node that failed the gate. */
export interface ToolUseFailure {
  nodeId: string;
  tools: string[];
  /** e.g. `node 'analyze' declared tools [power_law_fit] but completed without a successful call of them` */
  message: string;
}

/** The gate's verdict: `score` is 1.00 when it passes and 0.00 when any node fails. */
export interface ToolUseVerdict {
  passed: boolean;
  score: number;
  failures: ToolUseFailure[];
}

/**
 * Whether a ledger row is a call of the named tool (bare name, or `provider.tool`).
 * @param row a ledger row
 * @param name a declared tool name
 * @returns true when the row's source and tool match
 */
export function rowMatchesTool(row: InvocationRecord, name: string): boolean {
  const dot = name.indexOf(".");
  const tool = dot > 0 ? name.slice(dot + 1) : name;
  const toolMatches = row.toolId === tool || row.mcpToolName === tool;
  if (dot <= 0) return toolMatches;
  const provider = name.slice(0, dot);
  return toolMatches && (row.sourceId === provider || row.sourceId === derivedSourceId(provider));
}

/**
 * Checks the declarations of one run against the ledger.
 * @param ledger the broker's ledger
 * @param runId the run whose calls count
 * @param declarations the nodes; a node without tools always passes
 * @returns the verdict, naming each failing node and its tools
 */
export async function toolUseVerified(
  ledger: Ledger,
  runId: string,
  declarations: readonly ToolDeclaration[],
): Promise<ToolUseVerdict> {
  const ok = await ledger.query({ runId, status: "ok" });
  const failures: ToolUseFailure[] = [];
  for (const node of declarations) {
    const tools = node.tools ?? [];
    if (tools.length === 0) continue;
    if (ok.some((row) => tools.some((name) => rowMatchesTool(row, name)))) continue;
    failures.push({
      nodeId: node.id,
      tools,
      message: `node '${node.id}' declared tools [${tools.join(", ")}] but completed without a successful call of them in run '${runId}'`,
    });
  }
  return { passed: failures.length === 0, score: failures.length === 0 ? 1 : 0, failures };
}
