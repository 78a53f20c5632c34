/**
 * The audit of what an operator changes from the console: one authorization row per change, as the
 * permission service writes for a human decision, with `decisionSource: "operator_console"` (see
 * ARCHITECTURE.md, "The console").
 */
import { randomUUID } from "node:crypto";
import { type Clock, systemClock } from "../core/index.js";
import type { AuthorizationRecord } from "../governance/audit/index.js";
import type { Governance } from "../runtime/index.js";

/** The `decisionSource` of every row the console writes. */
export const CONSOLE_DECISION_SOURCE = "operator_console";

/** One change an operator made in the console. */
export interface ConsoleChange {
  /** The session the change concerns (a job's session, a grant's session). */
  sessionId: string;
  sourceId: string;
  toolId: string;
  /** What was done, e.g. `cancel_job`, `retry_job`, `revoke_grant`. */
  action: string;
  /** What it was done to, e.g. `job:<jobId>`, `grant:<grantId>`. */
  resource: string;
}

/**
 * Records a console change as an authorization row (`decisionSource: "operator_console"`) at the
 * session's current permission epoch.
 * @param governance the runtime whose ledger writer receives the row
 * @param change the session, source, tool, action and resource
 * @param seams the clock of `createdAt` and the id generator @default systemClock, crypto.randomUUID
 * @returns the row as appended
 * @throws GovernanceError `INVALID_INPUT` for an empty field; whatever the ledger throws
 * @example
 * await recordConsoleChange(governance, {
 *   sessionId: job.sessionId, sourceId: job.sourceId, toolId: "artifact_download",
 *   action: "cancel_job", resource: `job:${job.jobId}`,
 * });
 */
export async function recordConsoleChange(
  governance: Pick<Governance, "ledgerWriter"> & { permissions: Pick<Governance["permissions"], "epoch"> },
  change: ConsoleChange,
  seams: {
    clock?: Clock | undefined;
    newId?: (() => string) | undefined;
    /** Who made the change. @default "operator_console" (the CLI's own changes say "operator_cli") */
    decisionSource?: string | undefined;
    /** The operator who made it, when the console knows users (an access token's subject). */
    actor?: string | undefined;
  } = {},
): Promise<AuthorizationRecord> {
  const record: AuthorizationRecord = {
    id: (seams.newId ?? randomUUID)(),
    sessionId: change.sessionId,
    ...(seams.actor === undefined ? {} : { principal: seams.actor }),
    sourceId: change.sourceId,
    toolId: change.toolId,
    action: change.action,
    resource: change.resource,
    decisionSource: seams.decisionSource ?? CONSOLE_DECISION_SOURCE,
    createdAt: new Date((seams.clock ?? systemClock).now()).toISOString(),
    epoch: await governance.permissions.epoch(change.sessionId),
  };
  await governance.ledgerWriter.appendAuthorization(record);
  return record;
}
