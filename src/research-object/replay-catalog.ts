/**
 * What a replay rebuilds the catalog from: the configured servers (ids, transports, routing, and none of
 * their commands, URLs, headers or environment, which may hold secrets) and each server's live MCP tool
 * definitions at export, plus the manifests that governed the calls (`catalog/tools.json` and
 * `manifests/*.json` in the crate).
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { RoutingConfig, ServerConfig } from "../config/index.js";
import { GovernanceError } from "../core/index.js";
import type { CatalogSnapshot } from "../governance/catalog/index.js";
import type { SourceManifest } from "../governance/manifests/index.js";

/** The servers and tools of `catalog/tools.json`. */
export interface ReplayCatalog {
  version: 1;
  servers: ReplayServer[];
  /** Each server's tool definitions, as its `tools/list` gave them. */
  tools: { serverId: string; tool: Tool }[];
}

/** A configured server, without how to reach it. */
export type ReplayServer = Pick<ServerConfig, "id" | "transport" | "enabled" | "tools"> & {
  description?: string | undefined;
  toolCallTimeoutMs?: number | undefined;
  routing?: RoutingConfig | undefined;
};

/**
 * The replay catalog of a runtime, and the manifests it matched (derived ones are derived again).
 * @param snapshot the live catalog's snapshot
 * @param servers the configured servers
 * @returns the catalog and the manifests
 */
export function replayCatalogOf(
  snapshot: CatalogSnapshot | undefined,
  servers: readonly ServerConfig[],
): { catalog: ReplayCatalog; manifests: SourceManifest[] } {
  const tools: ReplayCatalog["tools"] = [];
  const seen = new Set<string>();
  for (const tool of snapshot?.tools ?? []) {
    const key = `${tool.serverId}\u0000${tool.liveTool.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    tools.push({ serverId: tool.serverId, tool: tool.liveTool });
  }
  return {
    catalog: {
      version: 1,
      servers: servers.map((server) => {
        const out: ReplayServer = {
          id: server.id,
          transport: server.transport,
          enabled: server.enabled,
          tools: server.tools,
        };
        if (server.description !== undefined) out.description = server.description;
        if (server.toolCallTimeoutMs !== undefined) out.toolCallTimeoutMs = server.toolCallTimeoutMs;
        if (server.routing !== undefined) out.routing = server.routing;
        return out;
      }),
      tools,
    },
    manifests: (snapshot?.sources ?? []).filter((source) => !source.derived).map((source) => source.manifest),
  };
}

const routingSchema = z.object({
  keywords: z.array(z.string()),
  mode: z.enum(["prefer", "off"]),
  priority: z.number(),
});

const catalogSchema = z.object({
  version: z.literal(1),
  servers: z.array(
    z.object({
      id: z.string().min(1),
      transport: z.enum(["stdio", "sse", "http"]),
      enabled: z.boolean(),
      description: z.string().optional(),
      toolCallTimeoutMs: z.number().positive().optional(),
      routing: routingSchema.optional(),
      tools: z.record(z.string(), z.object({ routing: routingSchema.optional() })),
    }),
  ),
  tools: z.array(
    z.object({
      serverId: z.string().min(1),
      tool: z.looseObject({
        name: z.string().min(1),
        inputSchema: z.looseObject({ type: z.literal("object") }),
      }),
    }),
  ),
});

/**
 * Reads `catalog/tools.json` back.
 * @param value the parsed file
 * @returns the catalog
 * @throws GovernanceError `INVALID_INPUT` naming the first bad path
 */
export function parseReplayCatalog(value: unknown): ReplayCatalog {
  const parsed = catalogSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new GovernanceError(
      "INVALID_INPUT",
      `The crate's tool catalog is malformed at ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}.`,
    );
  }
  return parsed.data as unknown as ReplayCatalog;
}

/**
 * The servers of a replay catalog as a parsed config: nothing to start (the replay pool answers).
 * @param catalog the replay catalog
 * @returns config servers with no command, URL, headers or environment
 */
export function replayServers(catalog: ReplayCatalog): ServerConfig[] {
  return catalog.servers.map((server) => {
    const out: ServerConfig = {
      id: server.id,
      transport: server.transport,
      args: [],
      env: {},
      headers: {},
      enabled: server.enabled,
      tools: server.tools,
    };
    if (server.description !== undefined) out.description = server.description;
    if (server.toolCallTimeoutMs !== undefined) out.toolCallTimeoutMs = server.toolCallTimeoutMs;
    if (server.routing !== undefined) out.routing = server.routing;
    return out;
  });
}
