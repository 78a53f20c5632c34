/**
 * A governed source that runs in the broker's own process instead of behind an MCP server (the
 * built-ins `artifact_download` and `paper_extract_pdf`). Its calls take the one call path of every
 * tool (see ARCHITECTURE.md, "The one call path"): the same replay rule, validation against its
 * manifest, permission and quota, one row each. Only two steps are its own: before the permission step it prepares the call (every
 * check that needs no effect), and instead of the MCP request it runs the prepared call.
 */
import type { McpToolResult } from "../../contract/index.js";
import type { SourceManifest } from "../manifests/index.js";
import type { InvokeOutcome, RefusedCall } from "./broker-types.js";

/** One call of an in-process tool, validated, as its source prepares it. */
export interface InProcessCall {
  toolId: string;
  /** The arguments, validated against the tool's manifest schema. */
  input: Record<string, unknown>;
  session: string;
  /** Who the call is made for (its row and its effects, a download's job, carry it). */
  principal?: string | undefined;
  threadId?: string | undefined;
  toolCallId?: string | undefined;
}

/** What a prepared call's run may use. */
export interface InProcessRunContext {
  /** Aborts when the caller aborts or the broker closes past its grace period. */
  signal: AbortSignal;
  /** The row's counters: the run sets how many attempts it made, also when it fails. */
  tally: { attempts: number };
  /** The id of the call's row (for the run's own spans). */
  invocationId: string;
  /** Sends an event to the caller (`InvokeRequest.onEvent`: a download's progress); absent when nobody listens. */
  emit?: ((event: Record<string, unknown>) => void) | undefined;
}

/** A call its source has prepared: what the permission step sees, and how to run it once allowed. */
export interface PreparedCall {
  /**
   * What the permission step renders its templates from, in place of the bare arguments. It must not
   * depend on anything random, so that every authorization of the same call sees the same request.
   * @default the validated arguments
   */
  subject?: Record<string, unknown> | undefined;
  /** The licence of what the call serves, recorded on its row. @default the source's licence */
  license?: string | undefined;
  /**
   * Set when the call's `threadId:toolCallId` already belongs to another call of this source that the
   * ledger does not hold yet (a download job still running, or left by a crashed process): the broker
   * refuses it as it refuses any reused key, on a row of its own.
   */
  keyTaken?: boolean | undefined;
  /**
   * Set when this very call was authorized before and its effect began (the job of the same call that a
   * crashed process left): the permission step is not asked again, and the call continues. @default false
   */
  authorized?: boolean | undefined;
  /**
   * Runs the call once it is authorized.
   * @returns the result (its row's normalized result)
   * @throws GovernanceError the call's failure (recorded on its row)
   */
  run(context: InProcessRunContext): Promise<McpToolResult>;
}

/** What a broker offers the in-process sources it serves (see `InProcessSource.attach`). */
export interface InProcessHost {
  /** See `Broker.recordRun`. */
  recordRun(
    call: Omit<RefusedCall, "runId">,
    prepared: Pick<PreparedCall, "run" | "license">,
  ): Promise<InvokeOutcome>;
}

/** A governed source served in process (see `BrokerOptions.inProcess`). */
export interface InProcessSource {
  /** Its manifest: its id (the rows' `sourceId`), licence, and tools (schemas, permission templates). */
  manifest: SourceManifest;
  /**
   * Prepares one call after validation and before the permission step: every check that needs no
   * effect. It must have no side effect: a refused call is recorded by the broker.
   * @param call the validated call
   * @returns the prepared call
   * @throws GovernanceError a refusal (recorded as the call's row)
   */
  prepare(call: InProcessCall): Promise<PreparedCall>;
  /**
   * Told of the broker that serves it, once, when that broker is made: its runs no tool call asked for
   * (a retried download) are recorded through it. @default nothing to tell
   */
  attach?(host: InProcessHost): void;
}
