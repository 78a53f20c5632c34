/**
 * The extracted papers of one gateway session as MCP resources: each successful `paper_extract_pdf` of
 * the session adds `sciencegate://papers/<jobId>/fulltext.md` to `resources/list`, and `resources/read`
 * returns its text, bounded and never read through a link (`readPaperText`). A session lists and reads
 * only its own extractions; any other uri is an MCP error.
 */
import type { ToolMessage } from "@langchain/core/messages";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
  type ResourceLink,
} from "@modelcontextprotocol/sdk/types.js";
import {
  PAPER_EXTRACT_TOOL_ID,
  type PaperExtractResult,
  paperTextPath,
  readPaperText,
} from "../artifacts/index.js";
import { isGovernanceError } from "../core/index.js";

/** A paper resource's uri: the job id is one plain name, so a uri never names a path of its own. */
const PAPER_URI = /^sciencegate:\/\/papers\/([A-Za-z0-9][A-Za-z0-9._-]{0,199})\/fulltext\.md$/;
/** MCP's error code for a resource the server does not have. */
const RESOURCE_NOT_FOUND = -32002;
const MIME_TYPE = "text/markdown";

/**
 * The uri of the text of an extraction.
 * @param artifactJobId the download job whose PDF was extracted
 * @returns `sciencegate://papers/<jobId>/fulltext.md`
 */
export function paperResourceUri(artifactJobId: string): string {
  return `sciencegate://papers/${artifactJobId}/fulltext.md`;
}

/** What a successful extraction adds to the call's result. */
export interface OfferedPaper {
  /** The `resource_link` content item naming the resource. */
  link: ResourceLink;
  /** Whether the session did not have it yet (then `notifications/resources/list_changed` is due). */
  added: boolean;
}

/** The paper resources of one session. */
export class GatewayPaperResources {
  readonly #dataDir: string;
  /** The session's extractions, by uri, in the order they were made. */
  readonly #papers = new Map<string, Resource & { artifactJobId: string }>();

  /** @param dataDir the data directory `paper_extract_pdf` writes `papers/<jobId>/` into */
  constructor(dataDir: string) {
    this.#dataDir = dataDir;
  }

  /**
   * Declares `resources` (with `listChanged`) and answers `resources/list`, `resources/read` and
   * `resources/templates/list` (none) on the session's server. Call it before the server connects.
   * @param server the session's server
   */
  serve(server: Pick<Server, "registerCapabilities" | "setRequestHandler">): void {
    server.registerCapabilities({ resources: { listChanged: true } });
    server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: this.list() }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
    server.setRequestHandler(ReadResourceRequestSchema, (request) => this.read(request.params.uri));
  }

  /**
   * Makes a successful `paper_extract_pdf` of the session a resource.
   * @param message the call's tool message
   * @returns the link for the call's result, or `undefined` for any other message (another tool, a
   *   failure, a text outside this data directory's `papers/`)
   */
  offer(message: ToolMessage): OfferedPaper | undefined {
    if (message.name !== PAPER_EXTRACT_TOOL_ID || message.status === "error") return undefined;
    const result = message.artifact as Partial<PaperExtractResult> | undefined;
    const jobId = result?.artifactJobId;
    if (typeof jobId !== "string" || result?.textPath !== paperTextPath(this.#dataDir, jobId))
      return undefined;
    const uri = paperResourceUri(jobId);
    if (!PAPER_URI.test(uri)) return undefined;
    const known = this.#papers.get(uri);
    const paper = known ?? {
      uri,
      name: `papers/${jobId}/fulltext.md`,
      title: `Full text of ${result.sourceId} ${result.sourceRecordId}`,
      description:
        `Text extracted from the PDF of download job ${jobId} (${result.pageCount} pages, a '## Page N' ` +
        `section each); untrusted data from ${result.sourceId} record ${result.sourceRecordId}.`,
      mimeType: MIME_TYPE,
      artifactJobId: jobId,
    };
    this.#papers.set(uri, paper);
    const { artifactJobId: _job, ...resource } = paper;
    return { link: { type: "resource_link", ...resource }, added: known === undefined };
  }

  /** @returns the session's paper resources, oldest first */
  list(): Resource[] {
    return [...this.#papers.values()].map(({ artifactJobId: _job, ...resource }) => resource);
  }

  /**
   * Reads one of the session's papers.
   * @param uri the resource's uri
   * @returns the text as one `text/markdown` content
   * @throws McpError `InvalidParams` for a uri that is not a paper uri (a path, `..`, another scheme);
   *   -32002 (resource not found) for a paper the session did not extract, or whose files are gone;
   *   `InternalError` when its files are links or larger than the extraction's bound
   */
  async read(uri: string): Promise<ReadResourceResult> {
    if (!PAPER_URI.test(uri)) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `'${uri}' is not a paper resource: read a uri that resources/list gives (sciencegate://papers/<jobId>/fulltext.md).`,
        { uri },
      );
    }
    const paper = this.#papers.get(uri);
    if (paper === undefined) {
      throw new McpError(
        RESOURCE_NOT_FOUND,
        `Resource not found: '${uri}' is not an extraction of this session (resources/list names them).`,
        { uri },
      );
    }
    try {
      const text = await readPaperText(this.#dataDir, paper.artifactJobId);
      return { contents: [{ uri, mimeType: MIME_TYPE, text }] };
    } catch (error) {
      if (!isGovernanceError(error)) throw error;
      const code = error.code === "NOT_FOUND" ? RESOURCE_NOT_FOUND : ErrorCode.InternalError;
      throw new McpError(code, error.message, { uri, reason: error.code });
    }
  }
}
