/**
 * The governed MCP gateway: one MCP server in front of every configured server and source, so that
 * any MCP client gets the governance a LangGraph app gets. Each connection is its own session (see
 * `GatewaySession`); the gateway follows the catalog and tells each session when its list changed.
 */
import { randomUUID } from "node:crypto";
import type { Readable, Writable } from "node:stream";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Implementation } from "@modelcontextprotocol/sdk/types.js";
import type { Server } from "@modelcontextprotocol/server";
import {
  type ArtifactBuiltinsRuntime,
  type BuiltinCallIds,
  builtinAuthorizationRequest,
  createArtifactBuiltins,
} from "../adapters/index.js";
import {
  type Clock,
  checkPrincipal,
  GovernanceError,
  PACKAGE_VERSION,
  requireGovernanceOption,
} from "../core/index.js";
import type { SourceCatalog } from "../governance/catalog/index.js";
import type { ResearchObjectSource } from "../research-object/index.js";
import { resolveDataDir } from "../runtime/index.js";
import {
  type DeferredToolsSectionOptions,
  resolveDeferredToolsSectionOptions,
  type SurfaceTool,
} from "../visibility/index.js";
import type { OutOfBandApproval } from "./gateway-approval-text.js";
import { type ConversationStateStore, MemoryConversationStateStore } from "./gateway-conversation-store.js";
import {
  createElicitationApproval,
  createElicitationBuiltinApproval,
  type ElicitationApprovalOptions,
  type ElicitationApprovalRuntime,
  elicitationApprovalOptionsOf,
} from "./gateway-elicitation.js";
import { HeldCalls } from "./gateway-held-calls.js";
import { createApprovalStateCodec } from "./gateway-request-state.js";
import { type GatewayApprovalHook, GatewaySession } from "./gateway-session.js";
import { createStatelessFace, type StatelessCaller } from "./gateway-stateless.js";
import { type GatewayStdioConnection, serveGatewayStdio } from "./gateway-stdio.js";
import { GatewaySubscriptions } from "./gateway-subscriptions.js";
import { hasSurface, type SurfaceRuntime } from "./gateway-surface-policy.js";
import type { GatewayToolNaming } from "./gateway-tool-list.js";

/** What the gateway uses of a governance runtime (`createGovernance` returns all of it). */
export interface GatewayRuntime extends ArtifactBuiltinsRuntime {
  /** Its `change` events (a server's `tools/list_changed`, `refresh()`) re-check every session's list. */
  catalog: SourceCatalog;
  /** With `ledger` and `config`, what a session's research object is exported from (`researchObjects`). */
  store?: ResearchObjectSource["store"] | undefined;
  config?: ResearchObjectSource["config"] | undefined;
  /**
   * What forwards the servers' prompts, resources, completion and log level (a `ServerPool`; a pool
   * without `request` forwards tools only); the broker records each read.
   */
  pool?: Partial<SurfaceRuntime["pool"]> | undefined;
}

/** Options of `createGatewayServer`. */
export interface GatewayServerOptions {
  /** The runtime (`createGovernance`). */
  governance: GatewayRuntime;
  /**
   * List every allowed tool from the start, for clients with a fixed tool table: each is promoted at
   * the definition it has when the session first sees it (as `prepareFixedToolTable` does); a tool
   * whose definition changes later leaves the list until `tool_search` shows its new schema.
   * `tool_search` stays listed. @default false: `tool_search`, the built-ins and what the session loaded
   */
  eager?: boolean | undefined;
  /**
   * Asked before each governed MCP call that would execute; `false` asks nobody (the broker's
   * permission hook decides alone, so a dangerous call that no grant or approval mode covers is a
   * `PERMISSION_DENIED` tool error).
   * @default `createElicitationApproval({ governance })` when the runtime enforces permissions: a dangerous
   *   call asks the client's user through MCP elicitation, or is refused saying how to approve it
   */
  approval?: GatewayApprovalHook | false | undefined;
  /**
   * The tools of a session that are not deferred and not MCP tools (listed always, after `tool_search`);
   * given, they replace the built-ins.
   * @default `artifact_download` and `paper_extract_pdf` when the runtime has `downloads` and a source
   *   that can offer a download (an `artifact-plan` tool; none for a gateway of only other servers); unless
   *   `approval` is `false`, a dangerous download is asked about by elicitation like an MCP call
   *   (`createElicitationBuiltinApproval`), else refused unless a grant or approval mode covers it; a
   *   client's cancellation of a download cancels its job (`cancelOnAbort`)
   */
  tools?: ((session: GatewaySession) => readonly StructuredToolInterface[]) | undefined;
  /** The token budget of the deferred-tools catalog in the `instructions`. @default 2500 tokens */
  instructions?: DeferredToolsSectionOptions | undefined;
  /** The server's name and version in the initialize result. @default `sciencegate-gateway` and the package version */
  serverInfo?: Implementation | undefined;
  /** Receives failures no client can be told about (a notification that could not be sent). @default stderr */
  onError?: ((error: unknown) => void) | undefined;
  /**
   * Offer each session its own research object (`sciencegate://research-object/session.zip`, an RO-Crate
   * zip of its calls) as an MCP resource; needs the runtime's `ledger`, `store` and `config`.
   * @default false
   */
  researchObjects?: boolean | undefined;
  /**
   * How governed tools are named to clients: `qualified` (`mcp__<source>__<tool>`) or `upstream` (the
   * server's own tool name wherever no other tool, built-in or qualified name of the session is spelt
   * the same and it is a plain MCP name; else qualified). A server's `gateway_tool_names` in the config
   * overrides it for that server's tools. Calls by the qualified name are always accepted.
   * @default "qualified"
   */
  toolNames?: GatewayToolNaming | undefined;
  /**
   * The HMAC key (at least 32 bytes) that signs the `requestState` of a 2026-07-28 client's approval
   * round trip; every replica that may receive the retry needs the same one.
   * @default 32 random bytes for this process: a retry is then resumed only by this replica
   */
  requestStateSecret?: string | Uint8Array | undefined;
  /** How long an approval round trip's `requestState` stays valid. @default 10 minutes */
  requestStateTtlMs?: number | undefined;
  /**
   * How long a 2026-07-28 client's call is held open on this replica while its upstream server waits
   * for the answer to a question it asked mid-call (a 2025-11-25 server's elicitation, a sampling)
   * relayed as `input_required`; then the question fails upstream and the call ends. The retry must
   * reach this replica (a 2026-07-28 server's elicitation round is not held). @default 5 minutes
   */
  upstreamInputTimeoutMs?: number | undefined;
  /**
   * `subscriptions/listen` streams one user may hold open on this replica over HTTP; more are refused
   * with `-32603` (the handler's own limit, 1,024, is for all users together). @default 64
   */
  maxListensPerUser?: number | undefined;
  /**
   * Where a 2026-07-28 client's conversations keep their promotions and extracted papers (text
   * included, bounded) between stateless requests (`PostgresConversationStateStore` for several
   * replicas). The gateway does not close it.
   * @default in this process's memory
   */
  conversations?: ConversationStateStore | undefined;
  /**
   * The out-of-band commands a 2026-07-28 client without elicitation is told (the 2025 face's are the
   * approval hook's own, `createElicitationApproval({outOfBand})`). @default none
   */
  outOfBand?: OutOfBandApproval | undefined;
  /** The clock of the approval states' expiry. @default the system clock */
  clock?: Clock | undefined;
  /**
   * Forward the servers' prompts, resources (templates and subscriptions too), completion and log
   * level, each under its source manifest's `surface` policy and with a ledger row per read; needs the
   * runtime's `pool` (the broker records the rows). Served to both revisions: a 2026-07-28 client's
   * read under `approval` asks by `input_required`, and its `subscriptions/listen` streams join the
   * subscriptions. @default true
   */
  upstreamSurface?: boolean | undefined;
}

/** Options of one connection. */
export interface GatewayConnectOptions {
  /**
   * The governance session of the connection; two connections given one id share its grants and source
   * switches (each keeps its own promotions). @default `gateway:<uuid>`, new for each connection
   */
  sessionId?: string | undefined;
  /**
   * The user the connection's calls are made for (an access token's subject; see `checkPrincipal`):
   * every row carries it, and only its grants, approval mode, cards and quotas apply.
   * @default none: the single user
   */
  principal?: string | undefined;
  /**
   * Whether the connection's user may answer approval cards; without it a dangerous call that no grant
   * or approval mode covers is refused without asking. @default true
   */
  mayApprove?: boolean | undefined;
}

/** The gateway: a factory of governed MCP sessions over one runtime. */
export interface GatewayServer {
  /**
   * Opens a session and connects it to a transport: stdio, an in-memory pair, or one Streamable HTTP
   * session (one transport per MCP session id).
   * @param transport the transport, not yet started
   * @param options the session id
   * @returns the connected session
   * @throws GovernanceError `CANCELLED` after `close()`
   */
  connect(transport: Transport, options?: GatewayConnectOptions): Promise<GatewaySession>;
  /**
   * Serves one client on a pipe (stdin/stdout) in the revision its first message asks for: an
   * `initialize` opens a 2025-11-25 session (as `connect` does), `server/discover` or a request with its
   * version in `_meta` is served as 2026-07-28 (stateless requests of the `default` conversation, or the
   * one each request names, for `options.principal`; approvals as multi-round-trip requests).
   * @param stdio the pipe (the process's `stdin` and `stdout`)
   * @param options the 2025 session's id; the principal and whether they may approve (both revisions)
   * @returns the connection; `ended` settles when stdin ends or the 2025 session closes
   * @throws GovernanceError `CANCELLED` after `close()`
   */
  connectStdio(
    stdio: { stdin: Readable; stdout: Writable },
    options?: GatewayConnectOptions,
  ): GatewayStdioConnection;
  /** @returns the sessions connected now */
  sessions(): readonly GatewaySession[];
  /**
   * Re-checks every session's list and sends `notifications/tools/list_changed` to each whose list
   * changed. The gateway calls it on every catalog change; call it after switching a source for a session.
   * @returns how many sessions were notified
   */
  toolsChanged(): Promise<number>;
  /**
   * Serves one 2026-07-28 (stateless) HTTP request: no session, the request's conversation (the
   * `sciencegate/conversation` `_meta` key or `Sciencegate-Conversation` header; `default`) names the
   * governance session, for its principal. `serveGatewayHttp` routes such requests here.
   * @param request the web request
   * @param caller the authenticated user and whether they may approve
   * @param parsedBody the body, when already read
   * @returns the response (JSON, or an SSE stream)
   */
  fetchStateless(request: Request, caller: StatelessCaller, parsedBody?: unknown): Promise<Response>;
  /** Closes every session and stops following the catalog; the runtime stays open (it is the caller's). */
  close(): Promise<void>;
}

/**
 * Creates the governed MCP gateway over a runtime. Every `tools/call` of every session goes through
 * `executeGovernedToolCall`, so through `Broker.invoke` with the session's id: validation, permission,
 * cache, rate limits, retries, envelope checks, one ledger row per call.
 * @param options the runtime (`governance`, from `createGovernance`), eager listing, approval hook (elicitation by default), built-ins, instructions budget, server info
 * @returns the gateway; `connect` one transport per client
 * @throws GovernanceError `INVALID_CONFIG` for an instructions budget that is not a positive number
 * @example
 * const governance = await createGovernance({ config: "extensions_config.json" });
 * const gateway = createGatewayServer({ governance });
 * await gateway.connect(new StdioServerTransport());
 */
export function createGatewayServer(options: GatewayServerOptions): GatewayServer {
  requireGovernanceOption(options, "createGatewayServer");
  const { governance } = options;
  const sessions = new Set<GatewaySession>();
  const onError =
    options.onError ??
    ((error: unknown) => process.stderr.write(`sciencegate gateway: ${errorText(error)}\n`));
  // A dangerous download is asked about like an MCP call, unless the app turned approvals off.
  const asking = options.approval === false ? undefined : elicitationRuntime(governance);
  const builtinApproval = asking ? createElicitationBuiltinApproval(asking) : false;
  const builtins =
    options.tools ??
    ((session: GatewaySession) =>
      createArtifactBuiltins(governance, {
        sessionId: () => session.sessionId,
        principal: () => session.principal,
        downloadApproval: builtinApproval,
        extractionApproval: builtinApproval,
        cancelOnAbort: true,
      }));
  const instructions = resolveDeferredToolsSectionOptions(options.instructions);
  const serverInfo = options.serverInfo ?? { name: "sciencegate-gateway", version: PACKAGE_VERSION };
  const approval =
    options.approval === false
      ? undefined
      : (options.approval ?? (asking && createElicitationApproval({ governance: asking })));
  const toolNaming = namingOf(governance, options.toolNames ?? "qualified");
  const surfaceRuntime = options.upstreamSurface !== false && hasSurface(governance) ? governance : undefined;
  const surface = surfaceRuntime && {
    runtime: surfaceRuntime,
    subscriptions: new GatewaySubscriptions(surfaceRuntime, onError),
  };
  let closed = false;

  const toolsChanged = async (): Promise<number> => {
    const sent = await Promise.all(
      [...sessions].map((session) =>
        session.toolsChanged().catch((error: unknown) => {
          onError(error);
          return false;
        }),
      ),
    );
    return sent.filter(Boolean).length;
  };
  const sessionSettings = (sessionId: string, principal: string | undefined, mayApprove: boolean) => ({
    runtime: governance,
    sessionId,
    principal: checkPrincipal(principal, "connection's principal"),
    mayApprove,
    eager: options.eager ?? false,
    serverInfo,
    approval,
    builtins,
    dataDir: governance.dataDir ?? resolveDataDir(),
    researchObject: options.researchObjects === true ? researchObjectSource(governance) : undefined,
    instructions,
    toolNaming,
    onError,
  });
  // The multi-round-trip approval stands in for the default elicitation hook; an app's own hook
  // is asked as it is on 2025 sessions.
  const ledger = governance.ledger;
  const elicitation: Omit<ElicitationApprovalOptions, "governance"> | undefined =
    options.approval === undefined
      ? {}
      : options.approval === false
        ? undefined
        : elicitationApprovalOptionsOf(options.approval);
  const codec = createApprovalStateCodec({
    secret: options.requestStateSecret,
    ttlMs: options.requestStateTtlMs,
    clock: options.clock,
  });
  const statelessApproval =
    elicitation !== undefined && asking && ledger
      ? {
          governance: { ...asking, ledger },
          codec,
          outOfBand: options.outOfBand ?? elicitation.outOfBand,
          // The gateway's own built-ins; an app's own `tools` are asked about by their own approvals.
          ...(options.tools
            ? {}
            : {
                builtinRequest: (name: string, args: Record<string, unknown>, call: BuiltinCallIds) =>
                  builtinAuthorizationRequest(governance, name, args, call),
              }),
        }
      : undefined;
  const conversations = options.conversations ?? new MemoryConversationStateStore();
  const stateless = createStatelessFace({
    serverInfo,
    openSession: ({ sessionId, principal, mayApprove }) =>
      new GatewaySession({
        ...sessionSettings(sessionId, principal, mayApprove),
        conversations,
        surface,
        onClose: () => {},
      }),
    conversations,
    approval: statelessApproval,
    codec,
    ledger,
    held: new HeldCalls({ timeoutMs: options.upstreamInputTimeoutMs }),
    maxListensPerUser: options.maxListensPerUser,
    questions: (threadId, toolCallId) => governance.broker.upstreamQuestions(threadId, toolCallId),
    subscriptions: surface?.subscriptions,
    onError,
  });
  // The 2026-07-28 servers of stdio connections: each is told itself (its `subscriptions/listen`).
  const stdioServers = new Set<{ sendToolListChanged(): Promise<void> }>();
  const stdioConnections = new Set<GatewayStdioConnection>();
  const stopFollowing = governance.catalog.on("change", () => {
    void toolsChanged();
    stateless.toolsChanged();
    for (const server of stdioServers) void server.sendToolListChanged().catch(onError);
  });

  const gateway: GatewayServer = {
    connectStdio(stdio, connectOptions = {}) {
      if (closed) throw new GovernanceError("CANCELLED", "The gateway is closed; it opens no new session.");
      const caller = {
        user: checkPrincipal(connectOptions.principal, "connection's principal"),
        mayApprove: connectOptions.mayApprove ?? true,
      };
      let modern: Server | undefined;
      const connection = serveGatewayStdio({
        ...stdio,
        legacy: (transport) => gateway.connect(transport, connectOptions),
        // The connection's `subscriptions/listen` governed as over HTTP; updates sent by its server.
        listen: stateless.stdioListen(caller, () => modern),
        modern: () => {
          const server = stateless.server(caller);
          modern = server;
          stdioServers.add(server);
          const onclose = server.onclose;
          server.onclose = () => {
            stdioServers.delete(server);
            onclose?.();
          };
          return server;
        },
        onError,
      });
      stdioConnections.add(connection);
      void connection.ended.then(() => stdioConnections.delete(connection));
      return connection;
    },
    async connect(transport, connectOptions = {}) {
      if (closed) throw new GovernanceError("CANCELLED", "The gateway is closed; it opens no new session.");
      const session = new GatewaySession({
        ...sessionSettings(
          sessionIdOf(connectOptions.sessionId),
          connectOptions.principal,
          connectOptions.mayApprove ?? true,
        ),
        surface,
        onClose: (ended) => sessions.delete(ended),
      });
      sessions.add(session);
      try {
        await session.connect(transport);
      } catch (error) {
        sessions.delete(session);
        throw error;
      }
      return session;
    },
    sessions: () => [...sessions],
    toolsChanged,
    fetchStateless(request, caller, parsedBody) {
      if (closed) {
        return Promise.resolve(
          Response.json(
            { jsonrpc: "2.0", id: null, error: { code: -32000, message: "The gateway is shutting down" } },
            { status: 503 },
          ),
        );
      }
      return stateless.fetch(request, caller, parsedBody);
    },
    async close() {
      closed = true;
      stopFollowing();
      surface?.subscriptions.close();
      await Promise.all([...sessions].map((session) => session.close()));
      await Promise.all([...stdioConnections].map((connection) => connection.close()));
      await stateless.close();
    },
  };
  return gateway;
}

/**
 * What the elicitation approvals need, when the broker asks the permission service whose decisions
 * they record; else `undefined` (nothing to ask).
 */
function elicitationRuntime(governance: GatewayRuntime): ElicitationApprovalRuntime | undefined {
  const { catalog, permissions, permissionsEnforced } = governance;
  return permissions && permissionsEnforced === true ? { catalog, permissions } : undefined;
}

/** What a research object is exported from, when the runtime has all of it. */
function researchObjectSource(governance: GatewayRuntime): ResearchObjectSource | undefined {
  const { ledger, store, config, catalog } = governance;
  if (!ledger || !store || !config) return undefined;
  return { ledger, store, config, catalog, dataDir: governance.dataDir ?? resolveDataDir() };
}

/** Each tool's naming: its server's `gateway_tool_names`, else the gateway's. */
function namingOf(
  governance: GatewayRuntime,
  fallback: GatewayToolNaming,
): (tool: SurfaceTool) => GatewayToolNaming {
  const byServer = new Map<string, GatewayToolNaming>();
  for (const server of governance.config?.servers ?? []) {
    if (server.gatewayToolNames !== undefined) byServer.set(server.id, server.gatewayToolNames);
  }
  return (tool) => (tool.serverId === undefined ? undefined : byServer.get(tool.serverId)) ?? fallback;
}

/** A blank id counts as absent (a new `gateway:<uuid>`). */
function sessionIdOf(requested: string | undefined): string {
  const trimmed = requested?.trim();
  return trimmed ? trimmed : `gateway:${randomUUID()}`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
