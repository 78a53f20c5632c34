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
 * The permission hook's answer. `authorizationId` is recorded on the invocation row. `commit`, when
 * present, writes an authorization row the hook has not written yet (one nobody decided on before
 * the call: `policy_not_dangerous`): the caller lets the call run and calls `commit` once, just before
 * it appends the call's own row, so that both share one commit (the authorization first); anything
 * the call records earlier that names the authorization calls it first. It resolves once the row is
 * durable. `ready`, when present, resolves once that held row is numbered (its session's permission
 * epoch) and held by the ledger's writer: the caller starts nothing of the call before it (so the
 * epoch's round trip overlaps the caller's own steps, such as rate-limit admission), and refuses the
 * call when it rejects. `runningElsewhere`
 * says that another invocation of the same `threadId:toolCallId` (another replica's, over a shared
 * session state) consumed the human's decision for this call and runs it: the broker then waits for
 * that invocation's row and replays it, and records nothing itself.
 */
export type AuthorizeResult =
  | {
      allowed: true;
      authorizationId?: string;
      /** Writes the held authorization row with the call's own row (see above); resolves once it is durable. */
      commit?: () => Promise<void>;
      /** Resolves once the row `commit` writes is held; nothing of the call starts before (see above). */
      ready?: () => Promise<void>;
    }
  | { allowed: false; reason: string; authorizationId?: string; runningElsewhere?: boolean };

/** The permission hook. A throw counts as a denial. */
export type Authorize = (request: AuthorizationRequest) => AuthorizeResult | Promise<AuthorizeResult>;
