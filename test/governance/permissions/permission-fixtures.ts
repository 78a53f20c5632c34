/** Builders of `AuthorizationRequest`s for the permission tests. */

import {
  sourceManifestSchema,
  toolManifestSchema,
} from "../../../src/governance/manifests/manifest-schema.js";
import type { AuthorizationRequest } from "../../../src/governance/permissions/authorization.js";
import { makeSource, makeTool, type ToolInput } from "../manifests/manifest-factory.js";

/** What a test changes about a call: the tool, the source, the ids and the arguments. */
export interface CallSpec {
  tool?: Partial<ToolInput>;
  source?: Parameters<typeof makeSource>[0];
  sessionId?: string;
  threadId?: string;
  toolCallId?: string;
  definitionHash?: string;
  input?: Record<string, unknown>;
}

/**
 * A broker-shaped permission request over valid manifests (a read-only `demo/search` by default).
 * @param spec what to change
 */
export function makeRequest(spec: CallSpec = {}): AuthorizationRequest {
  const tool = toolManifestSchema.parse(makeTool(spec.tool));
  const source = sourceManifestSchema.parse(makeSource({ tools: [makeTool(spec.tool)], ...spec.source }));
  return {
    sessionId: spec.sessionId ?? "s1",
    threadId: spec.threadId ?? "t1",
    toolCallId: spec.toolCallId ?? "call-1",
    sourceId: source.id,
    toolId: tool.id,
    source,
    tool,
    definitionHash: spec.definitionHash ?? "def-1",
    input: spec.input ?? { query: "brca1" },
  };
}

/** A `write` tool that is not read-only: dangerous under the default rule. */
export const WRITE_TOOL: Partial<ToolInput> = {
  id: "write",
  readOnly: false,
  permission: {
    action: "demo:write",
    resourceTemplate: "demo:write:{query}",
    summaryTemplate: 'Write "{query}"',
  },
};

/** The built-in download tool, with the resource template downloads use. */
export const DOWNLOAD_TOOL: Partial<ToolInput> = {
  id: "artifact_download",
  kind: "analysis",
  inputSchema: {
    type: "object",
    properties: {
      sourceId: { type: "string" },
      candidateId: { type: "string" },
      destinationPath: { type: "string" },
    },
  },
  permission: {
    action: "artifact:download",
    resourceTemplate: "artifact:{sourceId}:{candidateId}:{destinationPath}",
    summaryTemplate: "Download {candidateId} from {sourceId} to {destinationPath}",
  },
};
