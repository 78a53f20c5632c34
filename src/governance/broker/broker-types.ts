/** Public types of `Broker.invoke`: requests, outcomes and the permission hook. */

import type { ElicitRequestParams, ElicitResult } from "@modelcontextprotocol/client";
import type { McpToolResult } from "../../contract/index.js";
import type { GovernanceError } from "../../core/index.js";
import type { ProtocolEra, UpstreamRelay, UpstreamRequestContext } from "../../mcp/index.js";

/**
 * How the caller of one governed call meets what the upstream server asks during it
 * (ARCHITECTURE.md "Upstream requests"): it answers at once through a relay (the gateway, an app), or
 * it pauses for a person and calls again with the answers (a LangGraph task).
 */
export interface UpstreamInput {
  /**
   * Answers at once: elicitations, sampling (else the app's model answers it) and the server's log
   * messages. @default none: an elicitation is answered `cancel`, unless `pause`
   */
  relay?: UpstreamRelay | undefined;
  /**
   * Pause for a person: the first question without an answer is recorded and the invocation ends with
   * `INPUT_REQUIRED` (`data.questions`) and no invocation row; nothing else of the call is recorded
   * until it is invoked again with the answers. Needs `threadId` and `toolCallId`. A function pauses
   * only the questions it returns true for, before the relay is asked; the others go to the relay (the
   * gateway pauses a 2026-07-28 server's rounds, which any replica can continue). @default false
   */
  pause?: boolean | ((params: ElicitRequestParams, context: UpstreamRequestContext) => boolean) | undefined;
  /**
   * The answers to the call's questions so far, in the order the server asked them (as
   * `INPUT_REQUIRED` listed them). The call then continues on the authorization of the invocation
   * that asked. @default none
   */
  answers?: readonly ElicitResult[] | undefined;
}

/** A question an upstream server asked during a call, as `INPUT_REQUIRED` and `Broker.upstreamQuestions` list it. */
export interface UpstreamQuestion {
  /** 1 for the call's first question. */
  index: number;
  serverId: string;
  /** The revision it was asked in. */
  era: ProtocolEra;
  /** The server's elicitation: a form (`message`, `requestedSchema`) or a URL to visit (`url`). */
  params: ElicitRequestParams;
  /** Identifies the question; its answer is given only to a question with the same fingerprint. */
  fingerprint: string;
}

/** One governed call. */
export interface InvokeRequest {
  sourceId: string;
  toolId: string;
  /** The arguments as the model or app gave them; validated against the manifest schema. */
  input: unknown;
  /** The session id (a LangGraph thread id unless the app says otherwise). */
  sessionId: string;
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
  /**
   * What a call of an in-process tool reports while it runs (a download's `artifact_download_progress`
   * events), for the caller's custom stream. Called synchronously; a listener that throws is ignored.
   */
  onEvent?: ((event: Record<string, unknown>) => void) | undefined;
  /** What the caller does with the server's questions, sampling requests and log messages. @default none */
  upstream?: UpstreamInput | undefined;
}

/** A call refused before it reached `Broker.invoke` (see `Broker.recordRefusal`). */
export type RefusedCall = Pick<
  InvokeRequest,
  "sourceId" | "toolId" | "input" | "sessionId" | "principal" | "threadId" | "toolCallId" | "runId"
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

/**
 * A request the broker did not send but records (see `Broker.recordRead`): a read of a server's
 * surface beyond tools that the gateway forwarded under the source's `surface` policy (a prompt, a
 * resource, a completion, a log level), or refused.
 */
export interface RecordedRead {
  sourceId: string;
  /** The row's `toolId`: the MCP method (`prompts/get`, `resources/read`, …). */
  toolId: string;
  /** The row's `mcpToolName`: the object read (a prompt's name, a resource's uri, a log level). */
  name: string;
  /** What was asked, stored as the row's `requestRef` (the server, the method and the params sent). */
  request: Record<string, unknown>;
  sessionId: string;
  principal?: string | undefined;
  threadId?: string;
  /** Keys the row with `threadId`, as a tool call's. @default none */
  toolCallId?: string | undefined;
  /** The upstream requests made: 0 for a read refused before it was sent. */
  attempts: number;
  /** When the read began (before any question to a person) and ended, in the reader's clock. */
  startedMs: number;
  finishedMs: number;
  /** The answer (its object is the row's `normalizedRef` when `keep`), or why it failed or was refused. */
  outcome: { result: unknown; keep: boolean } | { error: GovernanceError };
}
