/**
 * Which approval hook an executor uses: the one the app gave, none when it opted out with `false`,
 * else the approval gate whenever the runtime can back it (a `createGovernance` runtime whose broker
 * enforces permissions). Every executor resolves it here, so cards are on by default everywhere.
 */
import { type ApprovalGateRuntime, createApprovalGate } from "./approval-gate.js";
import type { ApprovalHook } from "./approval-hook.js";
import type { ApprovalCardFormat } from "./hitl-protocol.js";

/** An executor's `approvalHook` option: a hook, `false` to opt out, or absent for the default gate. */
export type ApprovalHookOption = ApprovalHook | false | undefined;

/**
 * Resolves an executor's approval hook.
 * @param governance the runtime (its catalog, ledger and permission service back the gate)
 * @param option the app's hook, `false` (no cards: dangerous calls are refused by the broker), or
 *   `undefined` for the default
 * @param cardFormat the shape of the default gate's cards: langchain's `hitl` (the default) or `native`
 * @returns the hook to run before each MCP call, or `undefined` for none
 */
export function resolveApprovalHook(
  governance: object,
  option: ApprovalHookOption,
  cardFormat: ApprovalCardFormat | undefined = "hitl",
): ApprovalHook | undefined {
  if (option === false) return undefined;
  if (option !== undefined) return option;
  const runtime = enforcingRuntime(governance as Partial<ApprovalGateRuntime>);
  return runtime && createApprovalGate({ governance: runtime, cardFormat });
}

/** The parts of a full runtime whose broker enforces permissions, else `undefined`. */
export function enforcingRuntime(governance: Partial<ApprovalGateRuntime>): ApprovalGateRuntime | undefined {
  const { catalog, ledger, permissions } = governance;
  if (!permissions || !catalog || !ledger || governance.permissionsEnforced !== true) return undefined;
  return { catalog, ledger, permissions, permissionsEnforced: true };
}
