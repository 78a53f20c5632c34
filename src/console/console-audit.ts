/**
 * The audit of what an operator changes through the console: one authorization row per change, in the
 * same ledger as the calls' rows, so that `sciencegate audit` and the console itself show who changed a
 * session's permissions and when (see ARCHITECTURE.md, "The console").
 */
import { randomUUID } from "node:crypto";
import { systemClock } from "../core/index.js";
import type { Governance } from "../runtime/index.js";

/** One change an operator made through the console. */
export interface ConsoleChange {
  /** The session the change affects. */
  sessionId: string;
  /** The source it concerns (`"console"` when none). */
  sourceId: string;
  /** What was changed: `"grant"`, `"approval_mode"`, `"source_switch"`, a download job, … */
  toolId: string;
  /** The change, e.g. `revoke_grant`, `set_approval_mode`, `enable_source`. */
  action: string;
  /** What it applied to, e.g. the grant's scope, `mode:always_allow`, `source:pubmed`. */
  resource: string;
}

/**
 * Appends the authorization row of one console change: `decisionSource` `operator_console`, stamped
 * with the session's current permission epoch.
 * @param governance the runtime the console serves
 * @param change the session, source, object, action and resource of the change
 * @throws GovernanceError `INVALID_INPUT` for an empty field (the ledger refuses the row);
 *   `UPSTREAM_UNAVAILABLE` when the ledger or grant store is closed
 * @example
 * await recordConsoleChange(governance, {
 *   sessionId, sourceId: "console", toolId: "approval_mode", action: "set_approval_mode", resource: "mode:always_allow",
 * });
 */
export async function recordConsoleChange(governance: Governance, change: ConsoleChange): Promise<void> {
  const epoch = await governance.permissions.epoch(change.sessionId);
  await governance.ledger.appendAuthorization({
    id: randomUUID(),
    sessionId: change.sessionId,
    sourceId: change.sourceId,
    toolId: change.toolId,
    action: change.action,
    resource: change.resource,
    decisionSource: "operator_console",
    createdAt: new Date(systemClock.now()).toISOString(),
    epoch,
  });
}
