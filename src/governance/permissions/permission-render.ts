/**
 * Renders the permission of one call from its tool manifest (what a card says, and what an
 * `allow_matching` grant covers), and builds the approval card a human is shown.
 */
import { type TemplateFilter, type ToolManifest, templatePlaceholders } from "../manifests/index.js";
import type { AuthorizationRequest } from "./authorization.js";
import { permissionRisk } from "./permission-policy.js";
import { permissionFingerprint } from "./permission-request.js";
import { renderScope, renderTemplate, scopeDisplayValue } from "./permission-template.js";
import { PERMISSION_DECISIONS, type PermissionCard } from "./permission-types.js";

export { MAX_PLACEHOLDER_CHARS, MAX_RENDERED_CHARS, renderTemplate } from "./permission-template.js";

/** The rendered permission of one call. */
export interface RenderedPermission {
  /** The manifest's action, e.g. `pubmed:search`. */
  action: string;
  /** The full resource, e.g. `artifact:arxiv:2401.00001v1:papers/a.pdf`. */
  resource: string;
  /** The first two `:` segments of the resource, e.g. `artifact:arxiv`. */
  normalizedResource: string;
  /**
   * What grants are keyed on: the rendered `scopeTemplate`, else (no template, or one this call
   * cannot fill) `normalizedResource`.
   */
  scope: string;
  /** What an `allow_matching` grant on {@link scope} covers, in words. */
  scopeDescription: string;
  /** e.g. `Search PubMed for "brca1"`. */
  summary: string;
}

/**
 * The grant key of a resource: its first two `:` segments (`pubmed:search`, `artifact:arxiv`).
 * @param resource a rendered resource
 * @returns the normalized resource (the whole resource when it has fewer than three segments)
 */
export function normalizeResource(resource: string): string {
  return resource.split(":").slice(0, 2).join(":");
}

/**
 * Renders the permission of one call from its tool manifest. Besides the arguments, the templates
 * may use `{sourceId}` and `{toolId}` (arguments of the same name win).
 * @param call the source, the tool manifest and the validated arguments
 * @returns action, full and normalized resource, grant scope (with its description), and summary
 */
export function renderPermission(call: {
  sourceId: string;
  toolId: string;
  tool: Pick<ToolManifest, "permission">;
  input: Readonly<Record<string, unknown>>;
}): RenderedPermission {
  const values = { sourceId: call.sourceId, toolId: call.toolId, ...call.input };
  const { action, resourceTemplate, summaryTemplate, scopeTemplate } = call.tool.permission;
  const resource = renderTemplate(resourceTemplate, values, ",");
  const normalizedResource = normalizeResource(resource);
  const scoped = scopeTemplate === undefined ? undefined : renderScope(scopeTemplate, values);
  // The two texts only a card shows are rendered when first read: a call the policy allows needs
  // the action and the scope alone, and rendering them is most of this function's cost.
  let scopeDescription: string | undefined;
  let summary: string | undefined;
  return {
    action,
    resource,
    normalizedResource,
    scope: scoped ?? normalizedResource,
    get scopeDescription() {
      scopeDescription ??=
        scoped !== undefined && scopeTemplate !== undefined
          ? `every ${action} call with ${describeScope(scopeTemplate, values)}, for the rest of this session`
          : describeDefaultScope(action, resource, normalizedResource);
      return scopeDescription;
    },
    get summary() {
      summary ??= renderTemplate(summaryTemplate, values);
      return summary;
    },
  };
}

function describeScope(template: string, values: Readonly<Record<string, unknown>>): string {
  const parts = templatePlaceholders(template).map(({ name, filter }) => {
    const shown = scopeDisplayValue(values[name], filter as TemplateFilter | undefined);
    if (filter === "dir") return `${name} in ${shown} (not in its subfolders)`;
    if (filter === "origin") return `${name} on ${shown}`;
    return `${name} "${shown}"`;
  });
  return [...new Set(parts)].join(" and ");
}

function describeDefaultScope(action: string, resource: string, normalized: string): string {
  // A resource that starts with the action varies only in the arguments: the grant covers them all.
  if (normalized === resource || normalized === action)
    return `every ${action} call, whatever its arguments, for the rest of this session`;
  return `every ${action} call on a resource starting with ${normalized}:, for the rest of this session`;
}

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
    matchingScope: { resource: rendered.scope, description: rendered.scopeDescription },
    sourceId: request.sourceId,
    toolId: request.toolId,
    ...(request.toolCallId === undefined ? {} : { toolCallId: request.toolCallId }),
    args: request.input,
    risk: permissionRisk(request),
    allowedDecisions: [...PERMISSION_DECISIONS],
  };
}
