/**
 * The permission request of a planned download: `artifact_download` is a
 * built-in, not a catalog tool, so it carries a synthetic tool manifest whose templates make the
 * card name the file, the source and the destination, and whose grants are keyed `artifact:<source>`.
 */
import { basename } from "node:path";
import { GovernanceError, hashCanonical } from "../core/index.js";
import type { ToolManifest } from "../governance/manifests/index.js";
import type { AuthorizationRequest } from "../governance/permissions/index.js";
import { ARTIFACT_DOWNLOAD_TOOL_ID } from "../governance/permissions/index.js";
import type { ManifestLookup } from "./download-candidate.js";
import type { DownloadPlan } from "./download-types.js";

/**
 * The tool manifest the permission service sees for `artifact_download`. The resource's first two
 * `:` segments (`artifact:<sourceId>`) are what an `allow_matching` grant covers; the summary uses
 * placeholders only, so every untrusted value (file name, host) is sanitized and bounded by the renderer.
 */
export const DOWNLOAD_TOOL_MANIFEST: ToolManifest = {
  id: ARTIFACT_DOWNLOAD_TOOL_ID,
  description:
    "Download one artifact candidate of an earlier successful call into the workspace (built-in, governed).",
  // No kind fits a built-in that writes files; `analysis` keeps it out of the candidate-listing kind.
  kind: "analysis",
  mcpToolName: ARTIFACT_DOWNLOAD_TOOL_ID,
  inputSchema: {
    type: "object",
    properties: {
      mcpInvocationId: { type: "string" },
      candidateId: { type: "string" },
      destinationPath: { type: "string" },
    },
    required: ["mcpInvocationId", "candidateId"],
  },
  readOnly: false,
  permission: {
    action: "download",
    resourceTemplate: "artifact:{sourceId}:{sourceRecordId}:{destinationPath}",
    summaryTemplate:
      'Download "{fileName}" from {sourceTitle} ({sourceId} record {sourceRecordId}, host {urlHost}) ' +
      "to {destinationPath} in the workspace",
  },
  retryPolicy: {},
  timeoutMs: 600_000,
  routing: { keywords: [], mode: "off", priority: 0 },
  promptFragment: "",
};

/** The definition hash of {@link DOWNLOAD_TOOL_MANIFEST}; grants on downloads are bound to it. */
export const DOWNLOAD_TOOL_DEFINITION_HASH = hashCanonical({ builtin: DOWNLOAD_TOOL_MANIFEST });

/**
 * The `AuthorizationRequest` of a planned download, for `PermissionService.evaluate` / `decide` /
 * `authorize` and the approval card. `input` holds the plan's public facts (never the random
 * `planId`), so a re-run of the same call shows the same card and consumes the same decision.
 * @param catalog the source manifests (the `SourceCatalog`)
 * @param plan the plan `DownloadManager.prepare` returned
 * @returns the request: source = the candidate's source, tool = `artifact_download`
 * @throws GovernanceError `SOURCE_DISABLED` when the candidate's source is not in the catalog
 * @example
 * const verdict = await governance.permissions.evaluate(downloadAuthorizationRequest(governance.catalog, plan));
 */
export function downloadAuthorizationRequest(
  catalog: ManifestLookup,
  plan: DownloadPlan,
): AuthorizationRequest {
  const { candidate } = plan;
  const source = catalog.source(candidate.sourceId);
  if (source === undefined) {
    throw new GovernanceError("SOURCE_DISABLED", `Source '${candidate.sourceId}' is not in the catalog.`, {
      data: { sourceId: candidate.sourceId },
    });
  }
  const input: Record<string, unknown> = {
    mcpInvocationId: plan.mcpInvocationId,
    candidateId: candidate.candidateId,
    sourceRecordId: candidate.sourceRecordId,
    sourceTitle: source.manifest.displayName,
    url: candidate.url,
    urlHost: hostOf(candidate.url),
    fileName: basename(plan.destinationPath),
    destinationPath: plan.destinationPath,
    format: candidate.format,
    kind: candidate.kind,
    license: plan.license,
    ...(candidate.sizeBytes === undefined ? {} : { sizeBytes: candidate.sizeBytes }),
  };
  return {
    sessionId: plan.sessionId,
    ...(plan.principal === undefined ? {} : { principal: plan.principal }),
    sourceId: candidate.sourceId,
    toolId: ARTIFACT_DOWNLOAD_TOOL_ID,
    source: source.manifest,
    tool: DOWNLOAD_TOOL_MANIFEST,
    definitionHash: DOWNLOAD_TOOL_DEFINITION_HASH,
    input,
    ...(plan.threadId === undefined ? {} : { threadId: plan.threadId }),
    ...(plan.toolCallId === undefined ? {} : { toolCallId: plan.toolCallId }),
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url; // prepare() refuses unparsable URLs; kept total for direct callers
  }
}
