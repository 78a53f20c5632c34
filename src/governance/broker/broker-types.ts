/** Public types of `Broker.invoke`: requests, outcomes and the permission hook. */

import type { McpToolResult } from "../../contract/index.js";

/** One governed call. */
export interface InvokeRequest {
  sourceId: string;
  toolId: string;
  /** The arguments as the model or app gave them; validated against the manifest schema. */
  input: unknown;
  /** The session id (a LangGraph thread id unless the app says otherwise). */
  session: string;
  /**
   * Who the call is made for (an access token's subject, the app's user; see `checkPrincipal`): its row
   * carries it, and only this principal's grants, approval mode, recorded decisions and quotas apply.
   * @default none: the single user of a deployment without identities
   */
  principal?: string | undefined;
  /** With `toolCallId`, the idempotency key: a second call returns the recorded result. */
  threadId?: string;
  toolCallId?: string;
  /** Groups invocations of one agent run (for provenance checks). */
  runId?: string;
  /** This call's deadline, replacing the server's `tool_call_timeout`, the tool manifest's `timeoutMs` and the broker default. */
  timeoutMs?: number | undefined;
  /** Aborting cancels the call (`CANCELLED`) and the in-flight MCP request. */
  signal?: AbortSignal;
  /** Progress notifications of the MCP request. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/** A call refused before it reached `Broker.invoke` (see `Broker.recordRefusal`). */
export type RefusedCall = Pick<
  InvokeRequest,
  "sourceId" | "toolId" | "input" | "session" | "principal" | "threadId" | "toolCallId" | "runId"
>;

/** What `Broker.invoke` returns. */
export interface InvokeOutcome {
  invocationId: string;
  result: McpToolResult;
  /** Served from the result cache (no MCP call). */
  cacheHit: boolean;
  /** Returned from the ledger for a `threadId:toolCallId` that already ran (no MCP call). */
  replayed: boolean;
  attempts: number;
  queueWaitMs: number;
}
