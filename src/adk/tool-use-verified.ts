/**
 * The `tool_use_verified` gate: every node that declared tools made at least one successful call of
 * them itself. A call belongs to a node when it is made inside the node (`withToolUseVerified` scopes
 * everything the node awaits) or names the node (`callTool(..., { nodeId })`); it is recorded under
 * the run id `<runId>#<nodeId>`, so the ledger alone says which node made it.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { GovernanceError, isGovernanceError, requireGovernanceOption } from "../core/index.js";
import type { InvocationRecord, LedgerReader } from "../governance/audit/index.js";
import type { SourceCatalog } from "../governance/catalog/index.js";
import { type ResolvedTool, resolveToolName } from "./tool-resolver.js";

/** A node (or agent) of a workflow, as written in `workflow.json`. */
export interface ToolDeclaration {
  id: string;
  kind?: string;
  /** Tools the node promises to call: `provider.tool`, `mcp__<source>__<tool>` or unambiguous bare names. */
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

/** What the gate reads: the ledger holding the calls and the catalog the declared names resolve in. */
export interface ToolUseRuntime {
  ledger: LedgerReader;
  catalog: SourceCatalog;
}

/** One running node invocation, as `callTool` sees it. */
export interface NodeScope {
  runId: string;
  nodeId: string;
  /** The invocations `callTool` made inside this node invocation. */
  invocationIds: Set<string>;
}

const nodeScopes = new AsyncLocalStorage<NodeScope>();

/**
 * Runs a node invocation so that every `callTool` it awaits is credited to it.
 * @param scope the run, the node and the set that collects its invocation ids
 * @param run the node invocation
 * @returns what `run` returns
 */
export function runInNodeScope<T>(scope: NodeScope, run: () => T): T {
  return nodeScopes.run(scope, run);
}

/** @returns the node invocation the caller runs in, if any */
export function currentNodeScope(): NodeScope | undefined {
  return nodeScopes.getStore();
}

/**
 * The run id a node's calls are recorded under.
 * @param runId the run
 * @param nodeId the node's `workflow.json` id
 * @returns `<runId>#<nodeId>`
 */
export function nodeRunId(runId: string, nodeId: string): string {
  return `${runId}#${nodeId}`;
}

/** What `toolUseVerified` checks. */
export interface ToolUseCheck {
  /** The ledger and catalog (`createGovernance` returns both). */
  governance: ToolUseRuntime;
  /** The run whose calls count. */
  runId: string;
  /** The nodes; a node without tools always passes. */
  declarations: readonly ToolDeclaration[];
}

/**
 * Checks the declarations of one run against the ledger: each node by the calls recorded for it.
 * @param check the runtime (`governance`), the run and the node declarations
 * @returns the verdict, naming each failing node and its tools
 * @throws GovernanceError `INVALID_INPUT` when a declared bare name is ambiguous (naming the node and the
 *   qualified candidates)
 */
export async function toolUseVerified(check: ToolUseCheck): Promise<ToolUseVerdict> {
  requireGovernanceOption(check, "toolUseVerified");
  const { governance: runtime, runId, declarations } = check;
  const failures: ToolUseFailure[] = [];
  let outsideNodes: InvocationRecord[] | undefined;
  for (const node of declarations) {
    const rows = await runtime.ledger.query({ runId: nodeRunId(runId, node.id), status: "ok" });
    const failure = judgeNode(runtime.catalog, node, rows, `in run '${runId}'`);
    if (!failure) continue;
    outsideNodes ??= await runtime.ledger.query({ runId, status: "ok" });
    const unattributed = outsideNodes.filter((row) => failure.matches(row)).length;
    const hint =
      unattributed > 0
        ? ` (${unattributed} successful call(s) of them in the run were made outside any node: make them inside the node wrapped with withToolUseVerified, or pass callTool's nodeId)`
        : "";
    failures.push({ nodeId: node.id, tools: failure.tools, message: failure.message + hint });
  }
  return verdict(failures);
}

/**
 * Checks one node invocation by the calls it made.
 * @param runtime the ledger and catalog
 * @param node the node's declaration
 * @param invocationIds the invocations made inside the node invocation
 * @param runId the run, for the message
 * @returns the verdict of this node alone
 * @throws GovernanceError `INVALID_INPUT` for an ambiguous declared bare name
 */
export async function nodeToolUseVerified(
  runtime: ToolUseRuntime,
  node: ToolDeclaration,
  invocationIds: Iterable<string>,
  runId: string,
): Promise<ToolUseVerdict> {
  const rows = await Promise.all([...invocationIds].map((id) => runtime.ledger.get(id)));
  const ok = rows.filter((row) => row?.status === "ok") as InvocationRecord[];
  const failure = judgeNode(runtime.catalog, node, ok, `in this invocation (run '${runId}')`);
  return verdict(failure ? [{ nodeId: node.id, tools: failure.tools, message: failure.message }] : []);
}

function verdict(failures: ToolUseFailure[]): ToolUseVerdict {
  return { passed: failures.length === 0, score: failures.length === 0 ? 1 : 0, failures };
}

interface NodeFailure {
  tools: string[];
  message: string;
  /** Whether a row is a call of one of the declared tools. */
  matches: (row: InvocationRecord) => boolean;
}

/** A node fails when none of its rows is a call of a declared tool; names resolve like `callTool`'s. */
function judgeNode(
  catalog: SourceCatalog,
  node: ToolDeclaration,
  rows: readonly InvocationRecord[],
  where: string,
): NodeFailure | undefined {
  const tools = node.tools ?? [];
  if (tools.length === 0) return undefined;
  const resolved: ResolvedTool[] = [];
  const unknown: string[] = [];
  for (const name of tools) {
    try {
      resolved.push(resolveToolName(catalog, name));
    } catch (error) {
      if (!isGovernanceError(error) || error.code !== "TOOL_UNAVAILABLE") {
        throw isGovernanceError(error) && error.code === "INVALID_INPUT"
          ? new GovernanceError("INVALID_INPUT", `Node '${node.id}': ${error.message}`, {
              data: { nodeId: node.id, ...error.data },
            })
          : error;
      }
      unknown.push(name);
    }
  }
  const matches = (row: InvocationRecord) =>
    resolved.some((tool) => row.sourceId === tool.sourceId && row.toolId === tool.toolId);
  if (rows.some(matches)) return undefined;
  const note = unknown.length > 0 ? `; no tool is named ${unknown.map((n) => `'${n}'`).join(", ")}` : "";
  return {
    tools,
    matches,
    message: `node '${node.id}' declared tools [${tools.join(", ")}] but completed without a successful call of them ${where}${note}`,
  };
}
