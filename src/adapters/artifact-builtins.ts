/**
 * The artifact built-ins an executor adds next to the governed MCP tools: `artifact_download` and
 * `paper_extract_pdf`, calls of the built-ins' in-process source through the broker, each with the
 * approval card of a built-in call when the runtime enforces permissions, for a runtime with governed
 * downloads. `createGovernedAgent` and the fixed tool table share this one rule.
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import type {
  ArtifactDownloadToolOptions,
  BuiltinCallApproval,
  PaperExtractToolOptions,
} from "../artifacts/index.js";
import {
  createArtifactDownloadTool,
  createPaperExtractTool,
  downloadCall,
  extractionCall,
  PAPER_EXTRACT_TOOL_ID,
} from "../artifacts/index.js";
import { optional } from "../core/index.js";
import type { RefusedCall } from "../governance/broker/index.js";
import type { SourceManifest } from "../governance/manifests/index.js";
import { ARTIFACT_DOWNLOAD_TOOL_ID, type AuthorizationRequest } from "../governance/permissions/index.js";
import {
  type ApprovalCardFormat,
  type ApprovalGateRuntime,
  createAuthorizationApproval,
  enforcingRuntime,
  type GovernedRuntime,
  type PrincipalResolver,
  type SessionIdResolver,
} from "../nodes/index.js";

/** What the built-ins use of a governance runtime (a `createGovernance` runtime has all of it). */
export interface ArtifactBuiltinsRuntime extends GovernedRuntime, Partial<ApprovalGateRuntime> {
  /** Backs `artifact_download` and `paper_extract_pdf`; without it there are neither. */
  downloads?: (ArtifactDownloadToolOptions["downloads"] & PaperExtractToolOptions["downloads"]) | undefined;
  /** Where `paper_extract_pdf` writes (the gateway reads the papers there). */
  dataDir?: string | undefined;
  /**
   * The sources the runtime offers: the built-ins come by default only when one of them has an
   * `artifact-plan` tool (only those hand out download candidates). Without it they always come.
   */
  registry?:
    | {
        /** The registered source manifests. */
        list(): readonly SourceManifest[];
      }
    | undefined;
}

/** Options of {@link createArtifactBuiltins}. */
export interface ArtifactBuiltinsOptions {
  /**
   * `false` leaves them out, `true` adds them whatever the sources.
   * @default when a source of the runtime's registry can offer downloads (has an `artifact-plan` tool)
   */
  artifactTools?: boolean | undefined;
  /** The governance session of a call. @default `configurable.thread_id`, else `"default"` */
  sessionId?: SessionIdResolver | undefined;
  /** The shape of the built-ins' approval cards. @default "hitl" */
  cardFormat?: ApprovalCardFormat | undefined;
  /**
   * How a dangerous download is approved: `false` asks nobody (an executor outside a graph, where no
   * card can pause a run: the broker's permission step alone decides, so without a grant, recorded
   * decision or `always_allow` the download is refused), or the executor's own hook.
   * @default the approval card (`createBuiltinApproval`) when the runtime enforces permissions
   */
  downloadApproval?: BuiltinCallApproval | false | undefined;
  /**
   * How a dangerous extraction (under a `strict` policy or the app's own danger rule) is approved:
   * `false` asks nobody (the broker's permission step alone decides), or the executor's own hook.
   * @default the approval card (`createBuiltinApproval`) when the runtime enforces permissions and
   *   `downloadApproval` is not `false`
   */
  extractionApproval?: BuiltinCallApproval | false | undefined;
  /** Who a call is for (see `PrincipalResolver`). @default none: the single user */
  principal?: PrincipalResolver | undefined;
  /**
   * Whether aborting a call's signal cancels its download job (`ArtifactDownloadToolOptions.cancelOnAbort`).
   * @default false
   */
  cancelOnAbort?: boolean | undefined;
}

/**
 * The artifact built-ins of a runtime, or none (no `downloads`, `artifactTools: false`, or by default no
 * source that can offer a download: an app of only its own servers gets no `artifact_download`).
 * @param governance the runtime
 * @param options opt-out, session resolver and download approval
 * @returns `[artifact_download, paper_extract_pdf]` or `[]`
 */
export function createArtifactBuiltins(
  governance: ArtifactBuiltinsRuntime,
  options: ArtifactBuiltinsOptions = {},
): StructuredToolInterface[] {
  const downloads = governance.downloads;
  const offered = options.artifactTools ?? offersDownloads(governance);
  if (!offered || downloads === undefined) return [];
  const approval =
    options.downloadApproval === false
      ? undefined
      : (options.downloadApproval ?? createBuiltinApproval(governance, { cardFormat: options.cardFormat }));
  const extractionApproval =
    options.extractionApproval === false
      ? undefined
      : (options.extractionApproval ??
        (options.downloadApproval === false ? undefined : createBuiltinApproval(governance, options)));
  const session = options.sessionId ? { sessionId: options.sessionId } : {};
  return [
    createArtifactDownloadTool({
      broker: governance.broker,
      downloads,
      ...session,
      ...optional({ approval, cancelOnAbort: options.cancelOnAbort, principal: options.principal }),
    }),
    createPaperExtractTool({
      broker: governance.broker,
      downloads,
      ...session,
      ...optional({ approval: extractionApproval, principal: options.principal }),
    }),
  ];
}

/** One built-in call as its permission request is built: its session, principal and key. */
export interface BuiltinCallIds {
  sessionId: string;
  principal?: string | undefined;
  threadId?: string | undefined;
  toolCallId?: string | undefined;
}

/**
 * The permission request a built-in call will be authorized with (a download's plan, an extraction's
 * prepared call), for an approval asked before the call runs outside a graph task (the gateway's
 * round trip for 2026-07-28 clients). Nothing is recorded or run.
 * @param governance the runtime (its broker)
 * @param name `artifact_download` or `paper_extract_pdf`
 * @param args the call's arguments
 * @param call its session, principal and key
 * @returns the request, or `undefined` for another tool or a call that would be refused anyway (the
 *   call then records its own refusal)
 */
export async function builtinAuthorizationRequest(
  governance: Pick<ArtifactBuiltinsRuntime, "broker">,
  name: string,
  args: Record<string, unknown>,
  call: BuiltinCallIds,
): Promise<AuthorizationRequest | undefined> {
  const ids = optional({ principal: call.principal, threadId: call.threadId, toolCallId: call.toolCallId });
  let builtin: RefusedCall;
  if (name === PAPER_EXTRACT_TOOL_ID) {
    if (typeof args.artifactJobId !== "string") return undefined;
    builtin = extractionCall({ artifactJobId: args.artifactJobId, sessionId: call.sessionId, ...ids });
  } else if (name === ARTIFACT_DOWNLOAD_TOOL_ID) {
    const { mcpInvocationId, candidateId, destinationPath } = args;
    if (typeof mcpInvocationId !== "string" || typeof candidateId !== "string") return undefined;
    builtin = downloadCall({
      mcpInvocationId,
      candidateId,
      ...(typeof destinationPath === "string" && destinationPath.trim() ? { destinationPath } : {}),
      sessionId: call.sessionId,
      ...ids,
    });
  } else return undefined;
  // A call that ran or would be refused asks nothing: the call replays, or records its refusal.
  return governance.broker.authorizationRequest(builtin).catch(() => undefined);
}

/**
 * The approval card of a built-in call (`artifact_download`, `paper_extract_pdf`): the approval core
 * of MCP calls applied to the permission request the broker will authorize the call with, on a card
 * that accepts `approve` and `reject` only (an `edit` asks again: the request is not the model's
 * arguments). `undefined` when the runtime does not enforce permissions.
 * @param runtime a governance runtime (`createGovernance`), or any object with its permission parts
 * @param options `cardFormat`: the shape of the cards (langchain's `hitl` or `native`), default `hitl`
 * @returns the hook, one approval core per call of this function (sibling tasks must share one so that
 *   `allow_matching` releases them)
 * @example
 * const tool = createArtifactDownloadTool({ broker: governance.broker, downloads: governance.downloads, approval: createBuiltinApproval(governance) });
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

/** Whether a source of the runtime hands out download candidates (has an `artifact-plan` tool). */
function offersDownloads(governance: ArtifactBuiltinsRuntime): boolean {
  const manifests = governance.registry?.list();
  return manifests === undefined || manifests.some((m) => m.tools.some((t) => t.kind === "artifact-plan"));
}
