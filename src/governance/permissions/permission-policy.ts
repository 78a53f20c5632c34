/**
 * Which calls are dangerous and what they put at stake. Pure functions over the
 * broker's `AuthorizationRequest`, so an app can reuse them in its own predicate.
 */
import type { AuthorizationRequest } from "./authorization.js";
import type { PermissionPolicy, PermissionRisk } from "./permission-types.js";

/** The built-in download tool; always dangerous. */
export const ARTIFACT_DOWNLOAD_TOOL_ID = "artifact_download";

type PolicyCall = Pick<AuthorizationRequest, "toolId" | "tool" | "source">;

/**
 * Whether the call downloads an artifact: the `artifact_download` built-in, or any tool whose
 * permission action starts with `artifact`. (`artifact-plan` tools only list candidates.)
 * @param call the tool id and manifest
 * @returns true for downloads
 */
export function isArtifactDownload(call: Pick<PolicyCall, "toolId" | "tool">): boolean {
  return call.toolId === ARTIFACT_DOWNLOAD_TOOL_ID || call.tool.permission.action.startsWith("artifact");
}

/**
 * Whether the source's data is private or controlled.
 * @param call the source manifest
 * @returns true unless the source is `public`
 */
export function isPrivateSource(call: Pick<PolicyCall, "source">): boolean {
  return call.source.governance.dataClassification !== "public";
}

/**
 * The default danger rule: downloads, tools not declared read-only (derived manifests of unknown
 * servers are not read-only unless annotated, so they fail closed), and private or controlled sources.
 * @param call the source and tool of the call
 * @returns true when the call must be approved
 */
export function isDangerousByDefault(call: PolicyCall): boolean {
  return isArtifactDownload(call) || !call.tool.readOnly || isPrivateSource(call);
}

/**
 * The policy's verdict: `strict` makes every call dangerous; otherwise the app's predicate decides
 * when it answers, else the default rule.
 * @param request the call as the broker describes it (with the validated arguments)
 * @param policy the service's policy
 * @returns true when the call needs a human or a grant (or `always_allow`)
 * @throws whatever the app's predicate throws (the broker then denies the call)
 */
export function isDangerousCall(request: AuthorizationRequest, policy: PermissionPolicy = {}): boolean {
  if (policy.strict === true) return true;
  const verdict = policy.isDangerous?.(request);
  return verdict ?? isDangerousByDefault(request);
}

/**
 * What the call puts at stake, most serious first: a download, a write (not read-only), private or
 * controlled data, else a read.
 * @param call the source and tool of the call
 * @returns the card's risk
 */
export function permissionRisk(call: PolicyCall): PermissionRisk {
  if (isArtifactDownload(call)) return "download";
  if (!call.tool.readOnly) return "write";
  if (isPrivateSource(call)) return "private-data";
  return "read";
}
