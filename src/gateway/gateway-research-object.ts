/**
 * A gateway session's research object as an MCP resource: `resources/list` names
 * `sciencegate://research-object/session.zip`, and `resources/read` exports the session's RO-Crate
 * (`exportResearchObject`) as a zip blob. The uri names no session: a client reads only its own, bound
 * to its connection, so a session id seen elsewhere lets nobody read another session's record.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
} from "@modelcontextprotocol/sdk/types.js";
import { isGovernanceError } from "../core/index.js";
import {
  exportResearchObject,
  type ResearchObjectSource,
  researchObjectZip,
} from "../research-object/index.js";
import type { GatewayPaperResources } from "./gateway-paper-resources.js";

/** The uri of the session's research object. */
export const RESEARCH_OBJECT_URI = "sciencegate://research-object/session.zip";
/** MCP's error code for a resource the server does not have. */
const RESOURCE_NOT_FOUND = -32002;
/** A larger crate is left to `sciencegate export` (a base64 blob in one MCP message). */
const MAX_ZIP_BYTES = 32 * 1024 * 1024;

const RESOURCE: Resource = {
  uri: RESEARCH_OBJECT_URI,
  name: "research-object.zip",
  title: "Research object of this session",
  description:
    "This session's governed calls as an RO-Crate 1.1 zip: each call with its authorization, request and " +
    "results named by SHA-256, downloads and extractions; check it with sciencegate verify-crate.",
  mimeType: "application/zip",
};

/**
 * Answers `resources/list`, `resources/read` and `resources/templates/list` (none) of a session with
 * its research object and, when the session extracts papers, its paper resources.
 * @param server the session's server (before it connects)
 * @param source what the export reads (the runtime)
 * @param sessionId the session whose crate is read
 * @param papers the session's paper resources, if any
 */
export function serveResearchObject(
  server: Pick<Server, "registerCapabilities" | "setRequestHandler">,
  source: ResearchObjectSource,
  sessionId: string,
  papers: GatewayPaperResources | undefined,
): void {
  const resources = researchObjectResources(source, sessionId, papers);
  server.registerCapabilities({ resources: { listChanged: true } });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: await resources.list() }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => resources.read(request.params.uri));
}

/**
 * A session's own resources: its research object and, when the session extracts papers, its papers.
 * @param source what the export reads (the runtime)
 * @param sessionId the session whose crate is read
 * @param papers the session's paper resources, if any
 * @returns their list and read
 */
export function researchObjectResources(
  source: ResearchObjectSource,
  sessionId: string,
  papers: GatewayPaperResources | undefined,
): { list(): Promise<Resource[]>; read(uri: string): Promise<ReadResourceResult> } {
  return {
    list: async () => [...((await papers?.list()) ?? []), RESOURCE],
    read: async (uri) => {
      if (uri === RESEARCH_OBJECT_URI) return readResearchObject(source, sessionId);
      if (papers) return papers.read(uri);
      throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: '${uri}' (resources/list names them).`, {
        uri,
      });
    },
  };
}

async function readResearchObject(
  source: ResearchObjectSource,
  sessionId: string,
): Promise<ReadResourceResult> {
  try {
    const zip = researchObjectZip(await exportResearchObject({ governance: source, sessionId }));
    if (zip.byteLength > MAX_ZIP_BYTES) {
      throw new McpError(
        ErrorCode.InternalError,
        `This session's research object has ${zip.byteLength} bytes, more than the ${MAX_ZIP_BYTES} a resource carries; export it with: sciencegate export --session ${sessionId} --out FILE.zip`,
        { uri: RESEARCH_OBJECT_URI },
      );
    }
    return {
      contents: [
        { uri: RESEARCH_OBJECT_URI, mimeType: "application/zip", blob: Buffer.from(zip).toString("base64") },
      ],
    };
  } catch (error) {
    if (!isGovernanceError(error)) throw error;
    const code = error.code === "NOT_FOUND" ? RESOURCE_NOT_FOUND : ErrorCode.InternalError;
    throw new McpError(code, error.message, { uri: RESEARCH_OBJECT_URI, reason: error.code });
  }
}
