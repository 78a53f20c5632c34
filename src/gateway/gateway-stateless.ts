/**
 * The gateway's face for 2026-07-28 clients: stateless requests (version and capabilities in each
 * request's `_meta`, no session), `server/discover`, `subscriptions/listen`, the new result fields and
 * headers, served by the SDK's `createMcpHandler`. Each request is answered by the same
 * `GatewaySession` methods a 2025-11-25 session has, on the session of the request's conversation
 * (principal and conversation handle), whose promotions live in the conversation store and whose grants,
 * modes and decisions live in the runtime's session state (see ARCHITECTURE.md, "The governed MCP gateway").
 */

import type { ClientCapabilities, Implementation } from "@modelcontextprotocol/sdk/types.js";
import {
  type AuthInfo,
  CLIENT_CAPABILITIES_META_KEY,
  createMcpHandler,
  type McpHttpHandler,
  ProtocolError,
  Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { sha256Hex } from "../core/index.js";
import type { ConversationStateStore } from "./gateway-conversation-store.js";
import type { GatewayRequestExtra, GatewaySession } from "./gateway-session.js";
import { callWithStatelessApproval, type StatelessApprovalSettings } from "./gateway-stateless-approval.js";

/** The `_meta` key of a request that names its conversation. */
export const CONVERSATION_META_KEY = "sciencegate/conversation";
/** The HTTP header that names a request's conversation (the `_meta` key wins when both are given). */
export const CONVERSATION_HEADER = "sciencegate-conversation";
/** The conversation of a request that names none: one per principal. */
export const DEFAULT_CONVERSATION = "default";

const HANDLE = /^[A-Za-z0-9._:-]{1,128}$/;
const INVALID_PARAMS = -32602;

/** Who sent a stateless request. */
export interface StatelessCaller {
  /** The user the calls are made for; absent: the single user. */
  user?: string | undefined;
  /** Whether the user may answer approval cards. */
  mayApprove: boolean;
}

/** What the stateless face needs of the gateway. */
export interface StatelessFaceSettings {
  serverInfo: Implementation;
  /** Opens the (unconnected) session of a conversation. */
  openSession(options: {
    sessionId: string;
    principal: string | undefined;
    mayApprove: boolean;
  }): GatewaySession;
  conversations: ConversationStateStore;
  /** The multi-round-trip approval's settings; absent: approvals off, or the app's own hook asks. */
  approval: StatelessApprovalSettings | undefined;
  onError: (error: unknown) => void;
  /** Conversation sessions kept open in this process between requests. @default 256 */
  maxCachedSessions?: number | undefined;
}

/** The stateless face: a web-standard handler, and the notifier of its `subscriptions/listen` streams. */
export interface StatelessFace {
  /**
   * Serves one 2026-07-28 HTTP request.
   * @param request the request (its body given as `parsedBody` when already read)
   * @param caller who sent it
   * @param parsedBody the JSON body, when already read
   */
  fetch(request: Request, caller: StatelessCaller, parsedBody?: unknown): Promise<Response>;
  /**
   * A 2026-07-28 server for one stdio connection of one caller (the SDK's `serveStdio` pins it for the
   * connection's lifetime); its requests name their conversations as HTTP requests do (`default`).
   * @param caller who is on the other end of the pipe
   * @returns the unconnected server
   */
  server(caller: StatelessCaller): Server;
  /** Tells every `subscriptions/listen` stream that asked for it that the tool list changed. */
  toolsChanged(): void;
  close(): Promise<void>;
}

/**
 * Creates the stateless face.
 * @param settings the gateway's session factory, stores and approval settings
 * @returns the face
 */
export function createStatelessFace(settings: StatelessFaceSettings): StatelessFace {
  const cache = new Map<string, GatewaySession>();
  const maxCached = settings.maxCachedSessions ?? 256;

  const sessionOf = (caller: StatelessCaller, handle: string): GatewaySession => {
    const sessionId = conversationSessionId(caller.user, handle);
    const key = `${sessionId} ${caller.mayApprove}`;
    let session = cache.get(key);
    if (session) cache.delete(key);
    session ??= settings.openSession({ sessionId, principal: caller.user, mayApprove: caller.mayApprove });
    cache.set(key, session);
    for (const oldest of cache.keys()) {
      if (cache.size <= maxCached) break;
      cache.delete(oldest);
    }
    return session;
  };

  /** The request's conversation session, with the promotions its conversation saved. */
  const conversationOf = async (
    ctx: ServerContext,
    caller: StatelessCaller,
    fallback: string,
  ): Promise<GatewaySession> => {
    const named = ctx.mcpReq._meta?.[CONVERSATION_META_KEY];
    const handle = named === undefined ? fallback : checkHandle(named);
    const session = sessionOf(caller, handle);
    const saved = await settings.conversations.get(session.sessionId);
    if (saved) session.restorePromotion(saved.promoted);
    return session;
  };

  /** One server instance: per HTTP request, or per stdio connection. */
  const serverFor = (caller: StatelessCaller, fallback: string): Server => {
    // The capabilities and instructions every conversation of this caller shares.
    const prototype = sessionOf(caller, fallback);
    const instructions = prototype.instructions();
    const server = new Server(settings.serverInfo, {
      capabilities: prototype.capabilities as never,
      ...(instructions === undefined ? {} : { instructions }),
    });
    for (const method of prototype.handlers().keys()) {
      if (method === "tools/call") continue;
      server.setRequestHandler(method as "tools/list", async (request, rctx) => {
        const session = await conversationOf(rctx, caller, fallback);
        const run = session.handlers().get(method);
        if (run === undefined) throw new ProtocolError(-32601, `Method not found: ${method}`);
        return withProtocolErrors(() => run(request, extraOf(rctx))) as never;
      });
    }
    server.setRequestHandler("tools/call", async (request, rctx) => {
      const session = await conversationOf(rctx, caller, fallback);
      const before = JSON.stringify(session.promotion.promoted);
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      const call = {
        name: request.params.name,
        args,
        capabilities: (rctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[
          CLIENT_CAPABILITIES_META_KEY
        ] as ClientCapabilities | undefined,
        inputResponses: rctx.mcpReq.inputResponses,
        requestState: rctx.mcpReq.requestState(),
      };
      const result = await withProtocolErrors(() =>
        settings.approval
          ? callWithStatelessApproval(session, call, extraOf(rctx), settings.approval)
          : session.callTool(call.name, args, extraOf(rctx)),
      );
      const promoted = session.promotion.promoted;
      if (JSON.stringify(promoted) !== before) {
        await settings.conversations.update(session.sessionId, (current) => ({
          ...current,
          promoted: { ...current.promoted, ...promoted },
        }));
      }
      return result as never;
    });
    return server;
  };

  const handler: McpHttpHandler = createMcpHandler(
    async (ctx) => serverFor(callerOf(ctx.authInfo), handleOfHeader(ctx.requestInfo)),
    { legacy: "reject", onerror: settings.onError },
  );

  return {
    fetch: (request, caller, parsedBody) =>
      handler.fetch(request, {
        authInfo: { token: "", clientId: caller.user ?? "", scopes: [], extra: { caller } },
        ...(parsedBody === undefined ? {} : { parsedBody }),
      }),
    server: (caller) => serverFor(caller, DEFAULT_CONVERSATION),
    toolsChanged: () => handler.notify.toolsChanged(),
    close: () => handler.close(),
  };
}

/**
 * The governance session of a conversation: one per principal and handle. The principal is hashed so
 * that the id shows no user name; grants and modes are keyed by the principal as well.
 * @param user the principal (absent: the single user)
 * @param handle the conversation handle
 * @returns `gateway:conversation:<principal digest>:<handle>`
 */
export function conversationSessionId(user: string | undefined, handle: string): string {
  return `gateway:conversation:${sha256Hex(user ?? "").slice(0, 16)}:${handle}`;
}

function callerOf(authInfo: AuthInfo | undefined): StatelessCaller {
  const caller = authInfo?.extra?.caller as StatelessCaller | undefined;
  // Only the gateway's router calls the handler, always with a caller; none would be a bug: refuse.
  if (caller === undefined) throw new ProtocolError(-32603, "The request has no authenticated caller.");
  return caller;
}

function handleOfHeader(request: Request | undefined): string {
  const header = request?.headers.get(CONVERSATION_HEADER);
  return header === null || header === undefined || header.trim() === ""
    ? DEFAULT_CONVERSATION
    : checkHandle(header.trim());
}

function checkHandle(value: unknown): string {
  if (typeof value === "string" && HANDLE.test(value)) return value;
  throw new ProtocolError(
    INVALID_PARAMS,
    `Invalid conversation handle: '${CONVERSATION_META_KEY}' in _meta (or the ${CONVERSATION_HEADER} header) must be 1 to 128 characters of A-Z a-z 0-9 . _ : -`,
  );
}

/** A 2026 request's context as the request of a session method: no server-to-client requests exist. */
function extraOf(ctx: ServerContext): GatewayRequestExtra {
  return {
    signal: ctx.mcpReq.signal,
    requestId: ctx.mcpReq.id,
    ...(ctx.mcpReq._meta === undefined ? {} : { _meta: ctx.mcpReq._meta }),
    sendNotification: (notification: unknown) => ctx.mcpReq.notify(notification as never),
    sendRequest: () =>
      Promise.reject(
        new ProtocolError(-32601, "A 2026-07-28 request cannot carry server-to-client requests"),
      ),
  } as unknown as GatewayRequestExtra;
}

/** The SDK 1.x errors of the session's methods as the v2 server's (their codes and data kept). */
async function withProtocolErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    const coded = error as { code?: unknown; message?: unknown; data?: unknown };
    if (typeof coded?.code === "number" && typeof coded.message === "string") {
      throw new ProtocolError(coded.code, coded.message.replace(/^MCP error -?\d+: /, ""), coded.data);
    }
    throw error;
  }
}
