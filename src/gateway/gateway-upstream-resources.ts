/**
 * Upstream resources through the gateway, next to its own (`sciencegate://` papers and research
 * object): `resources/list` and `resources/templates/list` gather every server's whose manifest does not
 * deny them, and `resources/read` forwards a uri to the server that offers it, under its policy and
 * with its ledger row (`governedSurfaceRequest`). Uris pass unchanged: they are the server's own names.
 */

import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import type { Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { neutralizeContentText } from "../governance/envelope/index.js";
import {
  governedSurfaceRequest,
  RESOURCE_NOT_FOUND,
  type SurfaceCaller,
  type SurfaceRuntime,
  type SurfaceServer,
  surfaceServers,
} from "./gateway-surface-policy.js";

/** The scheme of the gateway's own resources: never sent upstream. */
export const GATEWAY_RESOURCE_SCHEME = "sciencegate:";

/**
 * Every upstream resource the caller may read.
 * @param runtime pool, catalog and ledger
 * @param caller session and principal
 * @returns the resources, server by server
 */
export async function listUpstreamResources(
  runtime: SurfaceRuntime,
  caller: SurfaceCaller,
): Promise<Resource[]> {
  return (await listed(runtime, caller, "resources/list", "resources")).map(
    (entry) => entry.item as Resource,
  );
}

/**
 * Every upstream resource template.
 * @param runtime pool, catalog and ledger
 * @param caller session and principal
 * @returns the templates, server by server
 */
export async function listUpstreamResourceTemplates(
  runtime: SurfaceRuntime,
  caller: SurfaceCaller,
): Promise<ResourceTemplate[]> {
  return (await listed(runtime, caller, "resources/templates/list", "resourceTemplates")).map(
    (entry) => entry.item as ResourceTemplate,
  );
}

/**
 * Reads one upstream resource from the server that offers it (a ledger row per read).
 * @param runtime pool, catalog and ledger
 * @param caller session, principal, question and signal
 * @param uri the resource's uri
 * @returns the server's result
 * @throws McpError -32002 for a uri no server offers; `InvalidParams` for a refused read; the server's error
 */
export async function readUpstreamResource(
  runtime: SurfaceRuntime,
  caller: SurfaceCaller,
  uri: string,
): Promise<Record<string, unknown>> {
  const server = await resourceServerOf(runtime, caller, uri);
  if (server === undefined) {
    throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: '${uri}' (resources/list names them).`, {
      uri,
    });
  }
  const result = await governedSurfaceRequest(runtime, caller, {
    server,
    method: "resources/read",
    name: uri,
    params: { uri },
  });
  // A read resource's text reaches a model as a tool result's does: made inert the same way; blobs
  // pass as they are.
  return Array.isArray(result.contents)
    ? { ...result, contents: result.contents.map((entry: unknown) => neutralizeContentText(entry)) }
    : result;
}

/**
 * The server a uri belongs to: the one server offering resources; else the one that lists it, or whose
 * template matches it.
 * @param runtime pool, catalog and ledger
 * @param caller session and principal
 * @param uri the resource's uri
 * @returns the server, or `undefined` when none offers it
 */
export async function resourceServerOf(
  runtime: SurfaceRuntime,
  caller: SurfaceCaller,
  uri: string,
): Promise<SurfaceServer | undefined> {
  if (uri.startsWith(GATEWAY_RESOURCE_SCHEME)) return undefined;
  const servers = await surfaceServers(runtime, "resources");
  if (servers.length <= 1) return servers[0];
  const resources = await listed(runtime, caller, "resources/list", "resources");
  const exact = resources.find((entry) => (entry.item as Resource).uri === uri);
  if (exact) return exact.server;
  const templates = await listed(runtime, caller, "resources/templates/list", "resourceTemplates");
  return templates.find((entry) => matches((entry.item as ResourceTemplate).uriTemplate, uri))?.server;
}

function matches(template: string, uri: string): boolean {
  try {
    return new UriTemplate(template).match(uri) !== null;
  } catch {
    return false;
  }
}

async function listed(
  runtime: SurfaceRuntime,
  caller: SurfaceCaller,
  method: "resources/list" | "resources/templates/list",
  field: "resources" | "resourceTemplates",
): Promise<{ item: unknown; server: SurfaceServer }[]> {
  const servers = await surfaceServers(runtime, "resources");
  const lists = await Promise.all(
    servers.map(async (server) => {
      const result = await governedSurfaceRequest(runtime, caller, {
        server,
        method,
        name: "*",
        params: {},
        isList: true,
      });
      const items: unknown[] = Array.isArray(result[field]) ? (result[field] as unknown[]) : [];
      // A server's own entry that claims the gateway's scheme is dropped: that name is the gateway's.
      return items
        .filter(
          (item) =>
            !String(
              (item as { uri?: unknown; uriTemplate?: unknown }).uri ??
                (item as { uriTemplate?: unknown }).uriTemplate ??
                "",
            ).startsWith(GATEWAY_RESOURCE_SCHEME),
        )
        .map((item) => ({ item, server }));
    }),
  );
  return lists.flat();
}
