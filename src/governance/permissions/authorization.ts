/** The permission hook the broker calls for every call, after validation and before any cache or I/O. */

import type { SourceManifest, ToolManifest } from "../manifests/index.js";

/** What the permission hook is asked about one call, after validation and before any cache or I/O. */
export interface AuthorizationRequest {
  sessionId: string;
  /**
   * Who the call is for: only this principal's grants, approval mode and recorded decisions apply to
   * it, and its authorization rows carry it. @default none (the single user)
   */
  principal?: string | undefined;
  threadId?: string;
  toolCallId?: string;
  sourceId: string;
  toolId: string;
  source: SourceManifest;
  tool: ToolManifest;
  /** Hash of the live tool definition; grants are bound to it. */
  definitionHash: string;
  /** The validated arguments. */
  input: Record<string, unknown>;
}

/**
 * The permission hook's answer. `authorizationId` is recorded on the invocation row. `committed`,
 * when present, is the commit of an authorization row the hook did not wait for: the broker lets
 * the call run and its `recorded` waits for that commit with the invocation row's. `runningElsewhere`
 * says that another invocation of the same `threadId:toolCallId` (another replica's, over a shared
 * session state) consumed the human's decision for this call and runs it: the broker then waits for
 * that invocation's row and replays it, and records nothing itself.
 */
export type AuthorizeResult =
  | { allowed: true; authorizationId?: string; committed?: Promise<void> }
  | { allowed: false; reason: string; authorizationId?: string; runningElsewhere?: boolean };

/** The permission hook. A throw counts as a denial. */
export type Authorize = (request: AuthorizationRequest) => AuthorizeResult | Promise<AuthorizeResult>;
