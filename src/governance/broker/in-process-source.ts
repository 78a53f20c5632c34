/**
 * A governed source that runs in the broker's own process instead of behind an MCP server (the
 * built-in `paper_extract_pdf`). Its calls take the one call path of every tool (see ARCHITECTURE.md,
 * "The one call path"): the same replay rule, validation against its manifest, permission and quota,
 * one row each. Only two steps are its own: before the permission step it prepares the call (every
 * check that needs no effect), and instead of the MCP request it runs the prepared call.
 */
import type { McpToolResult } from "../../contract/index.js";
import type { SourceManifest } from "../manifests/index.js";

/** One call of an in-process tool, validated, as its source prepares it. */
export interface InProcessCall {
  toolId: string;
  /** The arguments, validated against the tool's manifest schema. */
  input: Record<string, unknown>;
  session: string;
  threadId?: string | undefined;
  toolCallId?: string | undefined;
}

/** What a prepared call's run may use. */
export interface InProcessRunContext {
  /** Aborts when the caller aborts or the broker closes past its grace period. */
  signal: AbortSignal;
  /** The row's counters: the run sets how many attempts it made, also when it fails. */
  tally: { attempts: number };
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
   * Runs the call once it is authorized.
   * @returns the result (its row's normalized result)
   * @throws GovernanceError the call's failure (recorded on its row)
   */
  run(context: InProcessRunContext): Promise<McpToolResult>;
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
}
