/**
 * The approval card of a governed download (`artifact_download`, the paper acquisition graph): the
 * approval core of MCP calls applied to the download's plan, so the download manager's
 * `permissions.authorize` then consumes the recorded decision.
 */

import type { BuiltinCallApproval, DownloadApproval } from "../artifacts/index.js";
import { downloadAuthorizationRequest } from "../artifacts/index.js";
import {
  type ApprovalCardFormat,
  type ApprovalGateRuntime,
  createAuthorizationApproval,
  enforcingRuntime,
} from "../nodes/index.js";

/**
 * The download approval of a runtime whose broker enforces permissions, else `undefined` (downloads
 * then follow the broker's hook unasked, like MCP calls).
 * The card names the call `artifact_download` and accepts `approve` and `reject` only (an `edit` asks
 * again: a download's plan is not the model's arguments).
 * @param runtime a governance runtime (`createGovernance`), or any object with its permission parts
 * @param options `cardFormat`: the shape of the cards (langchain's `hitl` or `native`), default `hitl`
 * @returns the hook for `createArtifactDownloadTool({approval})`, one approval core per call of this
 *   function (sibling tasks must share one so that `allow_matching` releases them)
 * @example
 * const tool = createArtifactDownloadTool({ downloads: governance.downloads, approval: createDownloadApproval(governance) });
 */
export function createDownloadApproval(
  runtime: Partial<ApprovalGateRuntime>,
  options: { cardFormat?: ApprovalCardFormat | undefined } = {},
): DownloadApproval | undefined {
  const enforcing = enforcingRuntime(runtime);
  const approve = createBuiltinApproval(runtime, options);
  if (!enforcing || !approve) return undefined;
  const { catalog } = enforcing;
  return (sessionId, plan) =>
    approve(
      sessionId,
      async () => {
        const planned = await plan();
        return planned && downloadAuthorizationRequest(catalog, planned);
      },
      "artifact_download",
    );
}

/**
 * The approval card of a built-in call (`artifact_download`, `paper_extract_pdf`): the approval core
 * of MCP calls applied to the permission request the call will be authorized with, on a card that
 * accepts `approve` and `reject` only. `undefined` when the runtime does not enforce permissions.
 * @param runtime a governance runtime (`createGovernance`), or any object with its permission parts
 * @param options `cardFormat`: the shape of the cards (langchain's `hitl` or `native`), default `hitl`
 * @returns the hook, one approval core per call of this function
 */
export function createBuiltinApproval(
  runtime: Partial<ApprovalGateRuntime>,
  options: { cardFormat?: ApprovalCardFormat | undefined } = {},
): BuiltinCallApproval | undefined {
  const enforcing = enforcingRuntime(runtime);
  if (!enforcing) return undefined;
  const approve = createAuthorizationApproval(enforcing, { cardFormat: options.cardFormat });
  return (sessionId, request, name) => approve(sessionId, request, { name, editable: false });
}
