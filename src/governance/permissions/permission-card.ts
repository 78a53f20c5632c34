/**
 * The approval card of one call: what a human is shown before a dangerous call runs.
 */
import type { AuthorizationRequest } from "./authorization.js";
import { permissionRisk } from "./permission-policy.js";
import type { RenderedPermission } from "./permission-render.js";
import { permissionFingerprint } from "./permission-request.js";
import { PERMISSION_DECISIONS, type PermissionCard } from "./permission-types.js";

/**
 * Builds the approval card of a call from its rendered permission.
 * @param request the broker's description of the call
 * @param rendered `renderPermission(request)`
 * @returns the card; its `requestId` is stable for the same call (derived from the call's fingerprint)
 */
export function permissionCard(request: AuthorizationRequest, rendered: RenderedPermission): PermissionCard {
  return {
    type: "permission",
    requestId: `perm-${permissionFingerprint(request).slice(0, 32)}`,
    action: rendered.action,
    resource: rendered.resource,
    summary: rendered.summary,
    sourceId: request.sourceId,
    toolId: request.toolId,
    ...(request.toolCallId === undefined ? {} : { toolCallId: request.toolCallId }),
    args: request.input,
    risk: permissionRisk(request),
    allowedDecisions: [...PERMISSION_DECISIONS],
  };
}
