/**
 * The shapes of the live catalog: sources with their status, callable tools matched to live MCP
 * definitions, and the snapshot one refresh produces.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { SourceManifest, ToolManifest } from "../manifests/index.js";

/** Availability of a source. */
export type SourceStatus = "ready" | "degraded" | "unavailable" | "disabled";

/** A manifest tool that is not offered, and why. */
export interface MissingTool {
  toolId: string;
  mcpToolName: string;
  reason: string;
}

/** One source in the catalog. */
export interface CatalogSource {
  id: string;
  serverId: string;
  status: SourceStatus;
  /** Why the source is not `ready`. */
  reason?: string;
  /** True for a server without a manifest, governed by a derived default manifest. */
  derived: boolean;
  manifest: SourceManifest;
  /** Tool ids that can be called, in manifest order. */
  availableTools: string[];
  /** Tools that are hidden: absent from the server, incompatible, or the server is unavailable. */
  missingTools: MissingTool[];
}

/** One callable tool: its manifest and the live MCP definition it was matched to. */
export interface CatalogTool {
  sourceId: string;
  toolId: string;
  serverId: string;
  manifest: ToolManifest;
  liveTool: Tool;
  /** `toolDefinitionHash(liveTool)`: changes whenever the server changes the tool's contract. */
  definitionHash: string;
}

/** The result of one refresh. */
export interface CatalogSnapshot {
  /** Hash of every source's status, available and missing tool ids, and every tool's definition hash. */
  revision: string;
  sources: CatalogSource[];
  tools: CatalogTool[];
  /** Servers that could not be given a derived manifest (id clash), and similar notes. */
  warnings: string[];
  /**
   * Servers that something enabled needs whose `tools/list` failed in this refresh (not started, no
   * answer in time), in config order, each with why: their sources are `unavailable`.
   */
  unavailableServers: { serverId: string; reason: string }[];
}
