/** Builders of surface tools for the visibility tests. */
import { parseManifest } from "../../src/governance/manifests/manifest-loader.js";
import type { SourceManifest } from "../../src/governance/manifests/manifest-schema.js";
import type { SurfaceTool } from "../../src/visibility/surface-tool.js";
import { ToolSurface } from "../../src/visibility/tool-surface.js";
import { makeSource, makeTool, type ToolInput } from "../governance/manifests/manifest-factory.js";

/**
 * A validated source manifest.
 * @param id source id
 * @param tools its tools (ids and overrides)
 * @param overrides other source fields
 */
export function manifest(
  id: string,
  tools: Partial<ToolInput>[],
  overrides: Partial<Parameters<typeof makeSource>[0]> = {},
): SourceManifest {
  return parseManifest(makeSource({ id, tools: tools.map((t) => makeTool(t)), ...overrides }));
}

/**
 * A deferred surface tool with sensible defaults.
 * @param name model-visible name `mcp__<source>__<tool>`
 * @param overrides fields to replace
 */
export function surfaceTool(name: string, overrides: Partial<SurfaceTool> = {}): SurfaceTool {
  const [, sourceId = "s", toolId = "t"] = name.split("__");
  return {
    name,
    qualifiedName: `${sourceId}.${toolId}`,
    sourceId,
    toolId,
    description: `The ${toolId} tool of ${sourceId}.`,
    summary: `The ${toolId} tool of ${sourceId}.`,
    inputSchema: { type: "object", properties: { query: { type: "string" } } },
    readOnly: true,
    definitionHash: `hash-${name}`,
    routing: { keywords: [], mode: "off", priority: 0 },
    deferred: true,
    ...overrides,
  };
}

/** Surface tools of three small sources: papers (search, fetch_abstracts), proteins (search), structures (lookup). */
export function sampleTools(): SurfaceTool[] {
  return ToolSurface.fromManifests([
    manifest(
      "papers",
      [
        {
          id: "search",
          description: "Search journal articles and return titles and abstracts.",
          routing: { keywords: ["literature", "papers"], mode: "prefer", priority: 80 },
        },
        {
          id: "fetch_abstracts",
          description: "Fetch the abstracts of articles by their ids.",
          inputSchema: { type: "object", properties: { ids: { type: "array" } }, required: ["ids"] },
          routing: { keywords: ["abstract"], mode: "off", priority: 60 },
        },
      ],
      { prompt: { summary: "Biomedical literature.", citationPolicy: "Cite the id.", caveats: [] } },
    ),
    manifest("proteins", [
      {
        id: "search",
        description: "Search protein entries by name, gene or organism.",
        routing: { keywords: ["protein", "uniprot"], mode: "prefer", priority: 70 },
      },
    ]),
    manifest("structures", [
      {
        id: "lookup",
        description: "Fetch one 3D structure entry by its four-character id.",
        inputSchema: {
          type: "object",
          properties: { structure_id: { type: "string" } },
          required: ["structure_id"],
        },
        routing: { keywords: ["structure", "crystal"], mode: "prefer", priority: 75 },
      },
    ]),
  ]);
}
