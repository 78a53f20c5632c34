/**
 * Builds, outside the broker, the exact `AuthorizationRequest` the broker's permission hook will see
 * for a call, so that an approval gate can show a card and record a decision BEFORE `Broker.invoke`
 * (a broker call refused for want of approval is recorded under its `threadId:toolCallId` and replays
 * as refused), and the identity of a call that a recorded decision is bound to.
 */

import { canonicalJson, GovernanceError, hashCanonical } from "../../core/index.js";
import { InputValidator, type SourceCatalog } from "../catalog/index.js";
import type { AuthorizationRequest } from "./authorization.js";

// One validator for every gate: compiled schemas are cached by hash.
const sharedValidator = new InputValidator();

/**
 * The permission request of one governed call, with the arguments validated (defaults filled in,
 * empty optional strings dropped) exactly as the broker does it.
 * @param catalog the live catalog the broker uses
 * @param call source, tool, arguments, session and the optional principal, thread and tool call ids
 * @param validator @default a shared `InputValidator`
 * @returns the request to pass to `PermissionService.evaluate` / `decide`
 * @throws GovernanceError `TOOL_UNAVAILABLE` or `SOURCE_DISABLED` for a tool the catalog cannot call;
 * `INVALID_INPUT` for arguments that fail the tool's schema
 * @example
 * const request = createAuthorizationRequest(governance.catalog, { sourceId, toolId, input, sessionId, threadId, toolCallId });
 * const verdict = await permissions.evaluate(request);
 */
export function createAuthorizationRequest(
  catalog: SourceCatalog,
  call: {
    sourceId: string;
    toolId: string;
    input: unknown;
    sessionId: string;
    principal?: string | undefined;
    threadId?: string | undefined;
    toolCallId?: string | undefined;
  },
  validator: InputValidator = sharedValidator,
): AuthorizationRequest {
  const tool = catalog.requireTool(call.sourceId, call.toolId);
  const source = catalog.source(call.sourceId);
  // requireTool only returns tools of listed sources; this guards a refresh in between.
  if (!source) {
    throw new GovernanceError("TOOL_UNAVAILABLE", `Source '${call.sourceId}' is not in the catalog.`, {
      data: { sourceId: call.sourceId, toolId: call.toolId },
    });
  }
  const input = validator.parse(tool.manifest.inputSchema, call.input ?? {}, `${source.id}/${tool.toolId}`);
  return {
    sessionId: call.sessionId,
    sourceId: source.id,
    toolId: tool.toolId,
    source: source.manifest,
    tool: tool.manifest,
    definitionHash: tool.definitionHash,
    input,
    ...(call.principal === undefined ? {} : { principal: call.principal }),
    ...(call.threadId === undefined ? {} : { threadId: call.threadId }),
    ...(call.toolCallId === undefined ? {} : { toolCallId: call.toolCallId }),
  };
}

/**
 * The key a recorded decision (and a pending card) waits under: the call's thread (the session stands
 * in for a missing thread) and tool call id, as the ledger keys invocations, and its principal: a
 * decision one principal recorded is never found, consumed or cancelled by another's call under the
 * same ids.
 * @param request the call
 * @returns the key, or `undefined` without a tool call id
 */
export function permissionCallKey(request: AuthorizationRequest): string | undefined {
  if (request.toolCallId === undefined || request.toolCallId === "") return undefined;
  const key = [request.threadId ?? request.sessionId, request.toolCallId];
  return canonicalJson(request.principal === undefined ? key : [...key, request.principal]);
}

/**
 * What a decision was about: it only authorizes the very same call (session, principal, ids, tool,
 * definition and validated arguments).
 * @param request the call
 * @returns a SHA-256 hex digest
 */
export function permissionFingerprint(request: AuthorizationRequest): string {
  return hashCanonical({
    sessionId: request.sessionId,
    // Absent for the single user, so that fingerprints recorded before principals existed still match.
    ...(request.principal === undefined ? {} : { principal: request.principal }),
    threadId: request.threadId ?? null,
    toolCallId: request.toolCallId ?? null,
    sourceId: request.sourceId,
    toolId: request.toolId,
    definitionHash: request.definitionHash,
    input: request.input,
  });
}
