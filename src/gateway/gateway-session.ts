/**
 * One MCP session of the gateway: its own low-level SDK `Server`, governance session, thread and
 * promotion state. `tools/list` shows what the session may call now; `tools/call` runs through
 * `executeGovernedToolCall` (so through `Broker.invoke`); a promotion or a catalog change that alters
 * the list sends `notifications/tools/list_changed`; the session's extracted papers are its resources
 * (see ARCHITECTURE.md, "The governed MCP gateway").
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  type ElicitResult,
  ErrorCode,
  type Implementation,
  ListToolsRequestSchema,
  type LoggingLevel,
  McpError,
  type Result,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { PAPER_EXTRACT_TOOL_ID } from "../artifacts/index.js";
import {
  type ApprovalHook,
  type ApprovalHookResult,
  type ApprovalRequest,
  executeGovernedToolCall,
  type GovernedRuntime,
} from "../nodes/index.js";
import type { ResearchObjectSource } from "../research-object/index.js";
import {
  checkToolCall,
  type DeferredToolsSectionOptions,
  type PromotionState,
  promote,
  promotionReducer,
  type SurfaceTool,
} from "../visibility/index.js";
import { toCallToolResult } from "./gateway-call-result.js";
import type { ConversationStateStore } from "./gateway-conversation-store.js";
import { gatewayInstructions } from "./gateway-instructions.js";
import { GatewayPaperResources } from "./gateway-paper-resources.js";
import { progressRelay } from "./gateway-progress.js";
import { askSurfaceApproval, supportsElicitation, upstreamRelay } from "./gateway-relay.js";
import { researchObjectResources, serveResearchObject } from "./gateway-research-object.js";
import { roundOf } from "./gateway-round.js";
import type { GatewaySubscriptions, SurfaceSubscriber } from "./gateway-subscriptions.js";
import { type LocalResources, serveGatewaySurface } from "./gateway-surface.js";
import type { SurfaceCaller, SurfaceRuntime } from "./gateway-surface-policy.js";
import { type GatewayToolList, type GatewayToolNaming, gatewayToolList } from "./gateway-tool-list.js";

/** The MCP request a gateway call answers (its signal, `sendRequest`, `sendNotification`, `_meta`). */
export type GatewayRequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * One MCP method of a session, as both faces call it: the 2025-11-25 session's SDK server and the
 * 2026-07-28 stateless face (which adapts its request context to a `GatewayRequestExtra`).
 */
export type GatewayMethodHandler = (
  request: { method: string; params?: unknown },
  extra: GatewayRequestExtra,
) => Promise<Result>;

/**
 * Where a session's methods are registered, once for both protocol revisions: the SDK `Server`'s own
 * two registration methods, so a function written for a `Server` registers on it unchanged.
 */
export type GatewayMethodRegistrar = Pick<Server, "registerCapabilities" | "setRequestHandler">;

/** Where a call runs, for the approval hook. */
export interface GatewayCallContext {
  session: GatewaySession;
  /**
   * The MCP request being answered: `sendRequest` sends a request related to it (an elicitation goes
   * over this request's stream on Streamable HTTP), `signal` aborts with the client's cancellation.
   */
  request: GatewayRequestExtra;
}

/**
 * The gateway tool call the caller runs in, for code the call reaches without a parameter to carry it
 * (the download tool's approval, called with the session id and plan only).
 */
const gatewayCalls = new AsyncLocalStorage<GatewayCallContext>();

/** @returns the gateway tool call the caller runs in, or `undefined` outside one */
export function currentGatewayCall(): GatewayCallContext | undefined {
  return gatewayCalls.getStore();
}

function runInGatewayCall<T>(context: GatewayCallContext, work: () => Promise<T>): Promise<T> {
  return gatewayCalls.run(context, work);
}

/**
 * Asked before each governed MCP call of a session that would execute (a promoted, current tool). An
 * answer of `undefined` lets the broker's permission hook decide alone; a denial is the call's
 * `PERMISSION_DENIED` tool error and nothing runs; a throw counts as a denial.
 */
export type GatewayApprovalHook = (
  request: ApprovalRequest,
  context: GatewayCallContext,
) => ApprovalHookResult | undefined | Promise<ApprovalHookResult | undefined>;

/** What a session needs, resolved once by `createGatewayServer`. */
export interface GatewaySessionSettings {
  runtime: GovernedRuntime;
  sessionId: string;
  /** The user the session's calls are made for. @default none: the single user */
  principal?: string | undefined;
  /** Whether the session's user may answer approval cards. */
  mayApprove: boolean;
  eager: boolean;
  serverInfo: Implementation;
  approval: GatewayApprovalHook | undefined;
  builtins: (session: GatewaySession) => readonly StructuredToolInterface[];
  /** Where `paper_extract_pdf` writes `papers/<jobId>/`: the session's paper resources are read there. */
  dataDir: string;
  /**
   * The store of a 2026-07-28 conversation: its papers are kept there (text included), under the
   * session id, so any replica lists and reads them. @default the session's own memory
   */
  conversations?: ConversationStateStore | undefined;
  /** Offer the session's research object as a resource, exported from this runtime. @default not offered */
  researchObject?: ResearchObjectSource | undefined;
  instructions: DeferredToolsSectionOptions;
  /**
   * The upstream servers' prompts, resources, completion and log level, forwarded and governed, and the
   * gateway's subscriptions. @default none: only tools (and the session's own resources) are served
   */
  surface?: { runtime: SurfaceRuntime; subscriptions: GatewaySubscriptions } | undefined;
  /** How each governed tool is named to the client. @default qualified for every tool */
  toolNaming?: ((tool: SurfaceTool) => GatewayToolNaming) | undefined;
  onError: (error: unknown) => void;
  onClose: (session: GatewaySession) => void;
}

/**
 * One client connection: an MCP `Server` whose tool list and calls belong to one governance session.
 * Two sessions share nothing but the runtime: promotions live here, grants and source switches are
 * keyed by `sessionId` in the runtime's stores.
 */
export class GatewaySession {
  /** The governance session: grants, source switches, ledger rows. */
  readonly sessionId: string;
  /** The broker's thread of this session's calls (`threadId:toolCallId` keys a call). */
  readonly threadId: string;
  /** The user the session's calls are made for (`undefined`: the single user). */
  readonly principal: string | undefined;
  /** Whether the session's user may answer approval cards (no question is asked otherwise). */
  readonly mayApprove: boolean;
  /** Whether every allowed tool is listed from the start. */
  readonly eager: boolean;
  /** The session's MCP server; connect it to one transport. */
  readonly server: Server;
  /** Settles when the session ends: its transport closed (the client left) or `close()`. */
  readonly ended: Promise<void>;
  #resolveEnded!: () => void;
  readonly #settings: GatewaySessionSettings;
  readonly #builtins: readonly StructuredToolInterface[];
  /** The session's extracted papers as resources (with a `paper_extract_pdf` built-in). */
  readonly #papers: GatewayPaperResources | undefined;
  #promotion: PromotionState = { promoted: {} };
  /** Names `eager` promoted once; a changed definition of one of them needs `tool_search` again. */
  readonly #eagerSeen = new Set<string>();
  /** The fingerprint of the list the client was last shown or told about. */
  #announced: string;
  /**
   * The last list built, with what it was built from: the runtime answers `tools(sessionId)` with the
   * same array until the catalog or the session's sources change, and a promotion replaces
   * `#promotion`, so a call (which looks its name up in the list) rebuilds nothing unless one changed.
   */
  #listed: { tools: readonly SurfaceTool[]; promotion: PromotionState; list: GatewayToolList } | undefined;
  /** The last `instructions()`, with what they were written from (as `#listed`). */
  #instructed: { tools: readonly SurfaceTool[]; promotion: PromotionState; text: string } | undefined;
  /** This connection among the gateway's subscribers (two connections may share one session id). */
  readonly #subscriberKey = randomUUID();
  /** This session among the gateway's subscribers, once it serves the upstream surface. */
  #subscriber: SurfaceSubscriber | undefined;
  /** The level the client set with `logging/setLevel` (relayed log messages below it are dropped). */
  #logLevel: LoggingLevel | undefined;
  #closed = false;
  /** Every method registered through `methods`, by name (both faces dispatch through it). */
  readonly #handlers = new Map<string, GatewayMethodHandler>();
  #capabilities: ServerCapabilities = {};
  /**
   * Registers the session's MCP methods and capabilities for both faces: on the session's SDK server
   * (2025-11-25) and in the table the 2026-07-28 face dispatches through. A module that serves a method
   * of the gateway (resources, prompts, completion) registers it here, once.
   */
  readonly methods: GatewayMethodRegistrar = {
    registerCapabilities: (capabilities) => {
      this.#capabilities = mergeCapabilities(this.#capabilities, capabilities);
      this.server.registerCapabilities(capabilities);
    },
    setRequestHandler: (schema, handler) => {
      // The request schemas the SDK exports are zod objects with a literal `method`.
      const zod = schema as unknown as {
        shape: { method: { value: string } };
        parse(value: unknown): unknown;
      };
      this.#handlers.set(zod.shape.method.value, async (request, extra) =>
        handler(zod.parse(request) as never, extra as never),
      );
      this.server.setRequestHandler(schema, handler);
    },
  };

  /** @param settings the runtime, ids, options and callbacks */
  constructor(settings: GatewaySessionSettings) {
    this.#settings = settings;
    this.sessionId = settings.sessionId;
    this.threadId = settings.sessionId;
    this.principal = settings.principal;
    this.mayApprove = settings.mayApprove;
    this.eager = settings.eager;
    this.ended = new Promise((resolve) => {
      this.#resolveEnded = resolve;
    });
    const tools = this.#governedTools();
    this.#promoteEagerly(tools);
    this.server = new Server(settings.serverInfo, {
      capabilities: {},
      instructions: gatewayInstructions(tools, this.#promotion, settings.instructions),
    });
    this.methods.registerCapabilities({ tools: { listChanged: true } });
    this.#builtins = settings.builtins(this);
    const extracts = this.#builtins.some((tool) => tool.name === PAPER_EXTRACT_TOOL_ID);
    const conversation = settings.conversations && {
      store: settings.conversations,
      key: this.sessionId,
      principal: this.principal,
    };
    this.#papers = extracts ? new GatewayPaperResources(settings.dataDir, conversation) : undefined;
    // The upstream surface (subscriptions, notifications, elicited approvals) is served on the 2025
    // session's server; without it the gateway's own resources serve both faces.
    if (settings.surface) this.#serveSurface(settings.surface);
    else if (settings.researchObject)
      serveResearchObject(this.methods, settings.researchObject, this.sessionId, this.#papers);
    else this.#papers?.serve(this.methods);
    this.#announced = this.#list(tools).fingerprint;
    this.methods.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.listTools() }));
    this.methods.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      this.callTool(request.params.name, request.params.arguments ?? {}, extra),
    );
    this.server.onclose = () => this.#ended();
  }

  /** @returns the capabilities the session's methods declare */
  get capabilities(): ServerCapabilities {
    return structuredClone(this.#capabilities);
  }

  /** @returns the `instructions` a client is given now */
  instructions(): string | undefined {
    // Asked for each 2026-07-28 request (its server is built per request): kept like the list, for the
    // tools and promotions it was written from.
    const tools = this.#governedTools();
    const last = this.#instructed;
    if (last?.tools === tools && last.promotion === this.#promotion) return last.text;
    const text = gatewayInstructions(tools, this.#promotion, this.#settings.instructions);
    this.#instructed = { tools, promotion: this.#promotion, text };
    return text;
  }

  /** @returns the session's methods by name, for a face that dispatches without the session's server */
  handlers(): ReadonlyMap<string, GatewayMethodHandler> {
    return this.#handlers;
  }

  /** The session's promotions (a stateless conversation saves them between requests). */
  get promotion(): PromotionState {
    return this.#promotion;
  }

  /**
   * Replaces the session's promotions with a conversation's saved ones (eager promotions stay).
   * @param promoted model-visible name -> the definition hash it was promoted at
   */
  restorePromotion(promoted: Record<string, string>): void {
    this.#promotion = { ...this.#promotion, promoted: { ...this.#promotion.promoted, ...promoted } };
  }

  /**
   * The governed tool a call of this name would run, when it may run now (promoted and current);
   * `undefined` for `tool_search`, a built-in, or a call the executor refuses on its own.
   * @param name the name the client called (its upstream name too)
   * @returns the tool and its model-visible name
   */
  governedTool(name: string): { name: string; tool: SurfaceTool } | undefined {
    const visible = this.#list().upstreamNames.get(name) ?? name;
    const tools = this.#governedTools();
    if (checkToolCall(visible, this.#promotion, tools) !== undefined) return undefined;
    const tool = tools.find((one) => one.name === visible);
    return tool && { name: visible, tool };
  }

  /**
   * Whether the session has a built-in of this name (`artifact_download`, `paper_extract_pdf`).
   * @param name the tool the client called
   * @returns true for one of the session's built-ins
   */
  hasBuiltin(name: string): boolean {
    return this.#builtins.some((tool) => tool.name === name);
  }

  /**
   * Connects the session's server to a transport (stdio, in-memory, or one Streamable HTTP session).
   * @param transport the transport, not yet started
   */
  async connect(transport: Transport): Promise<void> {
    if (this.#subscriber) this.#settings.surface?.subscriptions.attach(this.#subscriber);
    await this.server.connect(transport);
  }

  /**
   * What `tools/list` answers now; the client is then up to date.
   * @returns `tool_search`, the built-ins and the governed tools the session may call
   */
  listTools(): Tool[] {
    const list = this.#list(this.#governedTools());
    this.#announced = list.fingerprint;
    // A copy: the list is kept for the next call, and the caller may change what it is given.
    return [...list.tools];
  }

  /**
   * Runs one `tools/call` the governed way, with a fresh tool call id: `tool_search` promotes (and
   * announces the new list before it answers), the built-ins run with the request's signal, thread and
   * (when the client sent a `progressToken`) a writer that turns download progress into
   * `notifications/progress`, a governed tool goes through the approval hook (when given) and
   * `Broker.invoke` with the request's abort signal. A successful `paper_extract_pdf` becomes a resource
   * of the session: its result gains a `resource_link`, and a new one sends `resources/list_changed`.
   * @param name the tool the client called
   * @param args its arguments
   * @param request the MCP request (signal, related messages)
   * @param options `toolCallId` to run the call under a reserved id (a multi-round-trip approval
   *   recorded its decision under it), `ask: false` to run without the approval hook (the broker's
   *   permission hook decides alone), `approval` to ask this hook instead of the session's, `rounds`
   *   for a 2026-07-28 request whose client continues an upstream server's rounds by retrying: a
   *   2026-07-28 server's question the client can answer pauses the call (the broker records it and
   *   throws `INPUT_REQUIRED`), and `answers` are the ones given so far
   * @returns the MCP result; every failure is `isError` with the governance error body
   * @throws the broker's pause for upstream input, with `rounds`
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    request: GatewayRequestExtra,
    options: {
      toolCallId?: string | undefined;
      ask?: boolean | undefined;
      approval?: GatewayApprovalHook | undefined;
      rounds?: { answers: readonly ElicitResult[] } | undefined;
    } = {},
  ): Promise<CallToolResult> {
    // A user who may not approve is never asked: the broker refuses what no grant or mode covers.
    const approval =
      options.approval ?? (this.mayApprove && options.ask !== false ? this.#settings.approval : undefined);
    // A tool the client knows by its upstream name runs under its model-visible name.
    name = this.#list().upstreamNames.get(name) ?? name;
    const config: LangGraphRunnableConfig = {
      configurable: { thread_id: this.threadId },
      signal: request.signal,
    };
    const hook: ApprovalHook | undefined = approval && ((call) => approval(call, { session: this, request }));
    // Download progress as `notifications/progress`, when the client asked for progress.
    const progress = progressRelay(request, this.#settings.onError);
    // What the upstream server asks or tells during the call goes to this request's client: a 2026-07-28
    // request brings its own capabilities and log level (no level: no log messages).
    const round = roundOf(request);
    const capabilities = round ? round.capabilities : this.server.getClientCapabilities();
    const relay = upstreamRelay(
      request,
      capabilities,
      round ? () => round.logLevel ?? null : () => this.#logLevel,
      this.#settings.onError,
    );
    // A 2026-07-28 server's round needs no live connection: it is recorded and continued by a retry,
    // on any replica. A 2025-11-25 server's question is a request in flight, relayed while it waits.
    const resumable = options.rounds && {
      pause: (params: { mode?: string | undefined }, context: { era: string }) =>
        context.era === "2026-07-28" && supportsElicitation(capabilities, params.mode ?? "form"),
      answers: options.rounds.answers,
    };
    // The download tool's approval asks through this request (`currentGatewayCall`).
    const outcome = await runInGatewayCall({ session: this, request }, () =>
      executeGovernedToolCall(
        this.#settings.runtime,
        { id: options.toolCallId ?? randomUUID(), name, args },
        {
          sessionId: this.sessionId,
          principal: this.principal,
          threadId: this.threadId,
          promotion: this.#promotion,
          builtinTools: this.#builtins,
          builtinConfig: { ...config, ...(progress ? { writer: progress.writer } : {}) },
          signal: request.signal,
          approval: hook && { hook, config },
          upstream: relay.upstream,
          ...(resumable ? { resumable } : {}),
          ...(relay.onProgress ? { onProgress: relay.onProgress } : {}),
        },
      ),
    );
    if (outcome.promotion) {
      this.#promotion = promotionReducer(this.#promotion, outcome.promotion);
      // Related to the request, so Streamable HTTP sends it on this request's stream, before the answer.
      await this.#announce((notification) => request.sendNotification(notification));
    }
    await Promise.all([progress?.settled(), relay.settled()]);
    // A name the session has no tool by is the client's mistake about the protocol, not a tool's
    // failure: a JSON-RPC error (its refusal row is written all the same).
    const unknown = unknownToolOf(outcome.message);
    if (unknown !== undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${unknown}`);
    const result = toCallToolResult(outcome.message);
    // The call ran and has its row: a store that cannot keep the paper costs the link, not the result.
    const paper = await this.#papers?.offer(outcome.message).catch((error: unknown) => {
      this.#settings.onError(error);
      return undefined;
    });
    if (paper) {
      result.content.push(paper.link);
      if (paper.added) {
        await request
          .sendNotification({ method: "notifications/resources/list_changed" })
          .catch(this.#settings.onError);
      }
    }
    return result;
  }

  /**
   * Re-reads the session's tools after a change outside a request (the catalog, a source switch): in
   * `eager` mode a new tool is listed at once; the client is told when its list is out of date.
   * @returns whether `notifications/tools/list_changed` was sent
   */
  async toolsChanged(): Promise<boolean> {
    if (this.#closed) return false;
    if (this.eager) this.#promoteEagerly(this.#governedTools());
    return this.#announce(() => this.server.sendToolListChanged());
  }

  /** Closes the session's server (its transport; running calls are aborted and audited as `CANCELLED`). */
  async close(): Promise<void> {
    await this.server.close();
    this.#ended();
  }

  /** Serves the upstream surface next to the session's own resources (papers, research object). */
  #serveSurface(surface: NonNullable<GatewaySessionSettings["surface"]>): void {
    const { researchObject } = this.#settings;
    const papers = this.#papers;
    const local: LocalResources | undefined = researchObject
      ? researchObjectResources(researchObject, this.sessionId, papers)
      : papers && { list: () => papers.list(), read: (uri) => papers.read(uri) };
    const subscriber = {
      key: this.#subscriberKey,
      send: (notification: ServerNotification) =>
        this.#closed ? Promise.resolve() : this.server.notification(notification),
    };
    // Only a connected session hears list changes (a 2026-07-28 client listens on its own stream).
    this.#subscriber = subscriber;
    serveGatewaySurface(this.methods, {
      runtime: surface.runtime,
      subscriptions: surface.subscriptions,
      subscriber,
      local,
      caller: (request): SurfaceCaller => {
        // A 2026-07-28 request asks by its own round trip, when its method can.
        const round = roundOf(request);
        const ask = round ? round.ask : askSurfaceApproval(request, this.server.getClientCapabilities());
        return {
          sessionId: this.sessionId,
          principal: this.principal,
          signal: request.signal,
          callId: round?.callId,
          ...(this.mayApprove ? { ask } : {}),
        };
      },
      setLogLevel: (level) => {
        this.#logLevel = level;
      },
    });
  }

  #governedTools() {
    return this.#settings.runtime.tools(this.sessionId);
  }

  #list(tools = this.#governedTools()): GatewayToolList {
    const listed = this.#listed;
    if (listed?.tools === tools && listed.promotion === this.#promotion) return listed.list;
    const list = gatewayToolList(tools, this.#promotion, this.#builtins, this.#settings.toolNaming);
    this.#listed = { tools, promotion: this.#promotion, list };
    return list;
  }

  /** Sends `list_changed` when the list differs from what the client knows. */
  async #announce(send: (notification: ServerNotification) => Promise<void>): Promise<boolean> {
    if (this.#closed || this.server.transport === undefined) return false;
    const { fingerprint } = this.#list();
    if (fingerprint === this.#announced) return false;
    this.#announced = fingerprint;
    try {
      await send({ method: "notifications/tools/list_changed" });
      return true;
    } catch (error) {
      // A client that went away misses nothing it could still use; the call's own answer stands.
      this.#settings.onError(error);
      return false;
    }
  }

  /**
   * The fixed-table rule (`prepareFixedToolTable`): each deferred tool is promoted at the definition it
   * has when the session first sees it; one that changes later is withdrawn until `tool_search`.
   */
  #promoteEagerly(tools: ReturnType<GovernedRuntime["tools"]>): void {
    if (!this.eager) return;
    const fresh = tools.filter((tool) => tool.deferred && !this.#eagerSeen.has(tool.name));
    if (fresh.length === 0) return;
    for (const tool of fresh) this.#eagerSeen.add(tool.name);
    this.#promotion = promotionReducer(
      this.#promotion,
      promote(
        fresh.map((tool) => tool.name),
        tools,
      ),
    );
  }

  #ended(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#settings.surface?.subscriptions.detach(this.#subscriberKey);
    this.#settings.onClose(this);
    this.#resolveEnded();
  }
}

/** Capabilities declared so far, with more: each capability's own settings merged one level deep. */
function mergeCapabilities(base: ServerCapabilities, more: ServerCapabilities): ServerCapabilities {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(more)) {
    const known = merged[key];
    merged[key] =
      typeof known === "object" && known !== null && typeof value === "object" && value !== null
        ? { ...known, ...value }
        : value;
  }
  return merged as ServerCapabilities;
}

/** The name of a call refused as naming no tool of the session (`unknown_tool`), else `undefined`. */
function unknownToolOf(message: ToolMessage): string | undefined {
  if (message.status !== "error" || typeof message.content !== "string") return undefined;
  try {
    const body = JSON.parse(message.content) as {
      code?: unknown;
      data?: { reason?: unknown; name?: unknown };
    };
    if (body.code !== "TOOL_UNAVAILABLE" || body.data?.reason !== "unknown_tool") return undefined;
    return typeof body.data.name === "string" ? body.data.name : (message.name ?? "");
  } catch {
    return undefined;
  }
}
