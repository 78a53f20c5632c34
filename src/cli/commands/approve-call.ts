/**
 * The permission step of `sciencegate call`: a dangerous call without cover is put to the human in
 * a terminal, answered by `--approve` when scripted, and otherwise not run.
 */

import { GovernanceError, isGovernanceError } from "../../core/index.js";
import type { InvokeRequest } from "../../governance/broker/index.js";
import type { PermissionCard, PermissionDecisionKind } from "../../governance/permissions/index.js";
import { createAuthorizationRequest } from "../../governance/permissions/index.js";
import type { CliRuntime } from "../runtime.js";
import { APPROVE_CHOICES, type ApproveChoice } from "../terminal-approval.js";

/** How a CLI call gets its answer. */
export interface CliApprovalOptions {
  /** `--approve`: the answer given up front. */
  approve?: ApproveChoice;
  /** Asks a human (a TTY); absent when nobody can be asked. */
  ask?: (card: PermissionCard) => Promise<ApproveChoice>;
}

const DECISIONS: Record<ApproveChoice, PermissionDecisionKind> = {
  once: "allow_once",
  matching: "allow_matching",
  deny: "deny",
  always: "allow_always",
};

/**
 * Settles the permission of one call before the broker runs it: records the decision (`always`
 * also switches the session to `always_allow`) so that the broker's permission hook consumes it. A call that needs
 * approval nobody can give is refused by the broker (and audited), then reported with how to approve.
 * @param runtime the CLI runtime
 * @param call the broker call, with its `toolCallId`
 * @param options `--approve` and the terminal prompt
 * @throws GovernanceError `PERMISSION_DENIED` when approval is required and neither was given; any
 *   other code the broker recorded when it refused the call first
 */
export async function approveCliCall(
  runtime: CliRuntime,
  call: InvokeRequest & { toolCallId: string },
  options: CliApprovalOptions,
): Promise<void> {
  if (!runtime.permissionsEnforced) return;
  let request: ReturnType<typeof createAuthorizationRequest>;
  try {
    request = createAuthorizationRequest(runtime.catalog, call);
  } catch (error) {
    // Invalid input or an unavailable tool: the broker reports (and records) the precise error.
    if (isGovernanceError(error)) return;
    throw error;
  }
  // A source that is off for the session is refused by the broker before its permission hook: nobody is
  // asked about a call that cannot run, and the CLI reports the broker's SOURCE_DISABLED.
  if (!runtime.sessions.isSourceEnabled(request.sessionId, request.source)) return;
  const verdict = await runtime.permissions.evaluate(request);
  if (verdict.outcome === "allow") return;
  const choice = options.approve ?? (await options.ask?.(verdict.card));
  if (choice !== undefined) {
    await runtime.permissions.decide(request, { decision: DECISIONS[choice] });
    return;
  }
  await refuse(runtime, call, verdict.card);
}

async function refuse(runtime: CliRuntime, call: InvokeRequest, card: PermissionCard): Promise<never> {
  // The broker refuses the undecided call before any I/O and writes the audit row. Its error is the one
  // reported, so the CLI never says something else than the ledger; only "approval required" gets the card.
  const refusal = await runtime.broker.invoke(call).then(
    () => undefined,
    (error: unknown) => error,
  );
  if (refusal !== undefined && !(isGovernanceError(refusal) && refusal.code === "PERMISSION_DENIED")) {
    throw refusal;
  }
  throw new GovernanceError(
    "PERMISSION_DENIED",
    `Approval required: ${card.summary} (${card.action} on ${card.resource}, risk ${card.risk}). Nothing was run. ` +
      `Run it in a terminal to be asked, or pass --approve ${APPROVE_CHOICES.join("|")}.`,
    {
      data: { approvalRequired: true, card },
    },
  );
}
