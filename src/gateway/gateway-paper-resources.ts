/**
 * The extracted papers of one gateway session as MCP resources: each successful `paper_extract_pdf` of
 * the session adds `sciencegate://papers/<jobId>/fulltext.md` to `resources/list`, and `resources/read`
 * returns its text, bounded and never read through a link (`readPaperText`). A session lists and reads
 * only its own extractions; any other uri is an MCP error. A 2025-11-25 session keeps them in its own
 * memory (its files are on its replica); a 2026-07-28 conversation keeps each paper's text in its
 * conversation store, so a request on any replica lists and reads it.
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
import { isGovernanceError, sha256Hex } from "../core/index.js";
import type { ConversationStateStore } from "./gateway-conversation-store.js";

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

/** A 2026-07-28 conversation's papers: its store, key and principal. */
export interface ConversationPapers {
  store: ConversationStateStore;
  /** The conversation's key (its session id, which names its principal and handle). */
  key: string;
  /** The conversation's principal (`undefined`: the single user), whose bytes the store counts. */
  principal: string | undefined;
}

/** The paper resources of one session. */
export class GatewayPaperResources {
  readonly #dataDir: string;
  /** The session's extractions, by uri, in the order they were made (a 2025-11-25 session). */
  readonly #papers = new Map<string, Resource & { artifactJobId: string }>();
  readonly #conversation: ConversationPapers | undefined;

  /**
   * @param dataDir the data directory `paper_extract_pdf` writes `papers/<jobId>/` into
   * @param conversation a 2026-07-28 conversation's store; absent: the session's own memory
   */
  constructor(dataDir: string, conversation?: ConversationPapers | undefined) {
    this.#dataDir = dataDir;
    this.#conversation = conversation;
  }

  /**
   * Declares `resources` (with `listChanged`) and answers `resources/list`, `resources/read` and
   * `resources/templates/list` (none) on the session's server. Call it before the server connects.
   * @param server the session's server
   */
  serve(server: Pick<Server, "registerCapabilities" | "setRequestHandler">): void {
    server.registerCapabilities({ resources: { listChanged: true } });
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: await this.list() }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
    server.setRequestHandler(ReadResourceRequestSchema, (request) => this.read(request.params.uri));
  }

  /**
   * Makes a successful `paper_extract_pdf` of the session a resource.
   * @param message the call's tool message
   * @returns the link for the call's result, or `undefined` for any other message (another tool, a
   *   failure, a text outside this data directory's `papers/`, a text over the conversation store's
   *   bound)
   */
  async offer(message: ToolMessage): Promise<OfferedPaper | undefined> {
    if (message.name !== PAPER_EXTRACT_TOOL_ID || message.status === "error") return undefined;
    const result = message.artifact as Partial<PaperExtractResult> | undefined;
    const jobId = result?.artifactJobId;
    if (typeof jobId !== "string" || result?.textPath !== paperTextPath(this.#dataDir, jobId))
      return undefined;
    const uri = paperResourceUri(jobId);
    if (!PAPER_URI.test(uri)) return undefined;
    const described: Resource = {
      uri,
      name: `papers/${jobId}/fulltext.md`,
      title: `Full text of ${result.sourceId} ${result.sourceRecordId}`,
      description:
        `Text extracted from the PDF of download job ${jobId} (${result.pageCount} pages, a '## Page N' ` +
        `section each); untrusted data from ${result.sourceId} record ${result.sourceRecordId}.`,
      mimeType: MIME_TYPE,
    };
    const conversation = this.#conversation;
    if (conversation) {
      // The text travels with the conversation: a replica without this data directory reads it too.
      let text: string;
      try {
        text = await readPaperText(this.#dataDir, jobId);
      } catch (error) {
        // Gone or over the extraction's bound: the call's result stands, without a resource.
        if (isGovernanceError(error)) return undefined;
        throw error;
      }
      const outcome = await conversation.store.addPaper(conversation.key, ownerOf(conversation.principal), {
        resource: described,
        text,
      });
      if (outcome === "too_large") return undefined;
      return { link: { type: "resource_link", ...described }, added: outcome === "added" };
    }
    const known = this.#papers.get(uri);
    const paper = known ?? { ...described, artifactJobId: jobId };
    this.#papers.set(uri, paper);
    const { artifactJobId: _job, ...resource } = paper;
    return { link: { type: "resource_link", ...resource }, added: known === undefined };
  }

  /** @returns the session's paper resources, oldest first */
  async list(): Promise<Resource[]> {
    const conversation = this.#conversation;
    if (conversation) return (await conversation.store.listPapers(conversation.key)) as Resource[];
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
    const conversation = this.#conversation;
    if (conversation) {
      const kept = await conversation.store.readPaper(conversation.key, uri);
      if (kept === undefined) throw notThisSessions(uri);
      return { contents: [{ uri, mimeType: kept.resource.mimeType ?? MIME_TYPE, text: kept.text }] };
    }
    const paper = this.#papers.get(uri);
    if (paper === undefined) throw notThisSessions(uri);
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

/** The store's account of a principal's paper bytes: a digest, so the table names no user. */
function ownerOf(principal: string | undefined): string {
  return sha256Hex(`sciencegate-paper-owner\n${principal ?? ""}`);
}

function notThisSessions(uri: string): McpError {
  return new McpError(
    RESOURCE_NOT_FOUND,
    `Resource not found: '${uri}' is not an extraction of this session (resources/list names them).`,
    { uri },
  );
}
