/**
 * The shape of one science source of the bundled `sciencegate-sources` MCP server. A source is a plain
 * object: its provider endpoints, attribution and licence, and its tools. Tools return records; the
 * server adds identity, attribution, licence and time, and turns thrown `ProviderError`s into
 * structured error results. See ./README.md for how to add a source.
 */
import type { z } from "zod";
import type { ArtifactCandidate, McpRecord } from "../../contract/index.js";

/** One provider API a source talks to. */
export interface SourceEndpoint {
  /**
   * Short kebab-case name (`eutils`, `pmc-oa`, `api`). The first endpoint of a source is its main one,
   * overridable with `SCIENCEGATE_<SOURCE>_BASE_URL`; the others with `SCIENCEGATE_<SOURCE>_<KEY>_BASE_URL`.
   */
  key: string;
  /** The real provider base URL, without a trailing slash. */
  defaultBaseUrl: string;
  /** Adds the NCBI E-utilities identification (`tool`, `email`, `api_key`) to every request. @default false */
  ncbi?: boolean;
}

/** What a tool returns; the server completes it into an `McpToolResult`. */
export interface ToolOutput {
  records: McpRecord[];
  /** Download candidates (`prepare_*` tools only); never downloaded by the tool. */
  artifacts?: ArtifactCandidate[];
  warnings?: string[];
  /** Paging (`total`, `hasMore`, `nextStart`/`nextCursor`), batch `failed[]` and other tool facts. */
  data?: Record<string, unknown>;
}

/** What a tool gets besides its validated input. */
export interface SourceToolContext {
  /** HTTP to this source's endpoints, bound to the MCP request's cancellation signal. */
  http: SourceHttp;
  /** Milliseconds since the epoch, from the server's injected clock. */
  now(): number;
}

/**
 * One tool of a source. Its MCP name is `<sourceId>_<id>`.
 * @typeParam Shape the zod raw shape of the input; it becomes the live `inputSchema`, which must equal the
 *   manifest's (test/servers/sources/manifests.test.ts checks it)
 */
export interface SourceTool<Shape extends z.ZodRawShape = z.ZodRawShape> {
  /** Tool id of the manifest (`search`, `fetch_abstracts`, ...). */
  id: string;
  title: string;
  description: string;
  inputShape: Shape;
  /**
   * Runs the tool.
   * @throws ProviderError for every upstream or input failure (never return an empty success for one)
   */
  run(input: z.output<z.ZodObject<Shape>>, context: SourceToolContext): Promise<ToolOutput>;
}

/** A source tool with its input type erased, so that tools of different shapes share one list. */
export interface AnySourceTool {
  id: string;
  title: string;
  description: string;
  inputShape: z.ZodRawShape;
  run(input: never, context: SourceToolContext): Promise<ToolOutput>;
}

/** One source: the unit that the module registry (./source-modules.ts) lists. */
export interface SourceModule {
  /** The manifest id (`pubmed`); also the `sourceId` of every result. */
  id: string;
  /** Must equal the manifest's `governance.attribution`. */
  attribution: string;
  /** Licence of the returned metadata; must equal the manifest's `governance.license`. */
  license: string;
  /** Provider APIs; the first is the main one (see `SourceEndpoint.key`). */
  endpoints: readonly SourceEndpoint[];
  tools: readonly AnySourceTool[];
}

/**
 * Declares a tool with its input type inferred from `inputShape`.
 * @param tool the tool
 * @returns the same tool, typed for the source's `tools` list
 */
export function defineTool<Shape extends z.ZodRawShape>(tool: SourceTool<Shape>): AnySourceTool {
  return tool as unknown as AnySourceTool;
}

/** One request to a source endpoint. */
export interface ProviderRequest {
  /** Query parameters; `undefined` values are left out. */
  query?: Readonly<Record<string, string | number | undefined>>;
  /** @default "GET" */
  method?: "GET" | "POST";
  body?: string;
  contentType?: string;
  /** The `Accept` header. @default "*\/*" */
  accept?: string;
  /** Non-2xx statuses the source interprets itself: their body is returned instead of an error. */
  acceptStatuses?: readonly number[];
}

/** A provider answer that passed the status, redirect and size checks. */
export interface ProviderResponse {
  status: number;
  /** The provider host, for messages. */
  host: string;
  contentType: string | undefined;
  text: string;
  /** The response headers (paging links such as UniProt's `Link`, totals such as `X-Total-Results`). */
  headers?: Headers;
}

/** The parts of a provider answer a parser needs (tests build one from a sample file). */
export type ProviderAnswer = Pick<ProviderResponse, "text" | "host" | "status">;

/** HTTP to one source's endpoints, bound to one call's cancellation signal. */
export interface SourceHttp {
  /**
   * Sends one request to `<endpoint base URL><path>`.
   * @param endpointKey a key of the source's `endpoints`
   * @param path the path below the base URL, starting with `/`
   * @param request query, method, body and accepted statuses
   * @returns the answer
   * @throws ProviderError `rate_limited` (429, with `retryAfterMs`), `not_found` (404), `unauthorized`
   *   (401/403), `invalid_input` (400/422), `upstream_unavailable` (3xx naming the target, 5xx, other
   *   statuses, timeout, unreachable host), `response_too_large`
   */
  request(endpointKey: string, path: string, request?: ProviderRequest): Promise<ProviderResponse>;
}
