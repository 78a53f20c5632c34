/**
 * The gateway's face for 2026-07-28 clients: stateless requests (version and capabilities in each
 * request's `_meta`, no session), `server/discover`, `subscriptions/listen`, the new result fields and
 * headers, served by the SDK's `createMcpHandler`. Each request is answered by the same
 * `GatewaySession` methods a 2025-11-25 session has, on the session of the request's conversation
 * (principal and conversation handle), whose promotions live in the conversation store and whose grants,
 * modes and decisions live in the runtime's session state (see ARCHITECTURE.md, "The governed MCP gateway").
 */

import { randomUUID } from "node:crypto";
import type {
  ClientCapabilities,
  ElicitResult,
  Implementation,
  LoggingLevel,
} from "@modelcontextprotocol/sdk/types.js";
import {
  type AuthInfo,
  CLIENT_CAPABILITIES_META_KEY,
  createMcpHandler,
  LOG_LEVEL_META_KEY,
  type McpHttpHandler,
  ProtocolError,
  Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { GovernanceError, sha256Hex } from "../core/index.js";
import type { LedgerReader } from "../governance/audit/index.js";
import { isUpstreamPause, type UpstreamQuestion } from "../governance/broker/index.js";
import { parseUpstreamAnswer } from "../nodes/index.js";
import type { ConversationStateStore } from "./gateway-conversation-store.js";
import { supportsFormElicitation } from "./gateway-elicitation.js";
import type { HeldCalls, HeldStep } from "./gateway-held-calls.js";
import { isListenBody, listenGovernance } from "./gateway-listen.js";
import { isSurfaceApproved, surfaceApprovalForm } from "./gateway-relay.js";
import { type ApprovalStateCodec, argumentsHash, roundKindOf } from "./gateway-request-state.js";
import { type StatelessRound, SurfaceInputRequired, withRound } from "./gateway-round.js";
import type { GatewayRequestExtra, GatewaySession } from "./gateway-session.js";
import {
  APPROVAL_INPUT_KEY,
  callWithStatelessApproval,
  refuseRequestState,
  type StatelessApprovalSettings,
  type StatelessCall,
  type StatelessCallResult,
} from "./gateway-stateless-approval.js";
import type { StdioListenGovernance } from "./gateway-stdio.js";
import type { GatewaySubscriptions } from "./gateway-subscriptions.js";

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
  /** Signs every round trip's `requestState` (approvals, surface approvals, held calls). */
  codec: ApprovalStateCodec;
  /** Where an answered surface approval's row is found, so that its state is used once. */
  ledger: Pick<LedgerReader, "findByCall"> | undefined;
  /** The calls held open while their upstream server waits for the client's answer. */
  held: HeldCalls;
  /**
   * The questions the broker recorded for a paused call (`Broker.upstreamQuestions`). With `ledger`,
   * a 2026-07-28 server's rounds pause the call and any replica continues it; absent: they are held.
   */
  questions?: ((threadId: string, toolCallId: string) => Promise<UpstreamQuestion[]>) | undefined;
  /** The upstream surface's subscriptions, which `subscriptions/listen` streams join. @default none */
  subscriptions?: GatewaySubscriptions | undefined;
  onError: (error: unknown) => void;
  /** Conversation sessions kept open in this process between requests. @default 256 */
  maxCachedSessions?: number | undefined;
  /**
   * `subscriptions/listen` streams one user may hold open on this replica over HTTP; more are refused
   * (`-32603`), so that one user cannot take the handler's whole limit from the others. @default 64
   */
  maxListensPerUser?: number | undefined;
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
  /**
   * The governance of one stdio connection's `subscriptions/listen` requests: each listen's resource
   * subscriptions are governed as an HTTP listen's are, for the listen's conversation, and the servers'
   * updates and list changes are sent by the connection's server (the SDK's stdio entry routes them
   * onto the open listens).
   * @param caller who is on the other end of the pipe
   * @param server the connection's 2026-07-28 server, once pinned
   * @returns the connection's listen governance (`close` when the connection ends)
   */
  stdioListen(caller: StatelessCaller, server: () => Server | undefined): StdioListenGovernance;
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
      // The session's one method table; what this revision has no method for stays on 2025 sessions.
      if (method === "tools/call" || SESSION_ONLY_METHODS.has(method)) continue;
      server.setRequestHandler(method as "tools/list", async (request, rctx) => {
        const session = await conversationOf(rctx, caller, fallback);
        const run = session.handlers().get(method);
        if (run === undefined) throw new ProtocolError(-32601, `Method not found: ${method}`);
        if (!ASKING_METHODS.has(method)) {
          return withProtocolErrors(() => run(request, extraOf(rctx, roundOf(rctx)))) as never;
        }
        return withProtocolErrors(() =>
          surfaceRoundTrip(session, method, request, rctx, (round) => run(request, extraOf(rctx, round))),
        ) as never;
      });
    }
    server.setRequestHandler("tools/call", async (request, rctx) => {
      const session = await conversationOf(rctx, caller, fallback);
      const before = JSON.stringify(session.promotion.promoted);
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      const call = {
        name: request.params.name,
        args,
        capabilities: capabilitiesOf(rctx),
        inputResponses: rctx.mcpReq.inputResponses,
        requestState: rctx.mcpReq.requestState(),
        ...(pausing ? { rounds: { answers: [] } } : {}),
      };
      const extra = extraOf(rctx, roundOf(rctx));
      const result = await withProtocolErrors(async () => {
        const kind = roundKindOf(call.requestState);
        // The retry of a call held open for its upstream server's question: answer it, go on.
        if (kind === "upstream") return resumeHeld(session, call, extra);
        // The retry of a call paused at its upstream server's round: continue it with the answers.
        if (kind === "paused") return resumePaused(session, call, extra);
        return heldAnswer(
          session,
          call,
          await settings.held.start(extra, (held) =>
            settings.approval
              ? callWithStatelessApproval(session, call, held, settings.approval)
              : session.callTool(call.name, args, held, { rounds: call.rounds }),
          ),
        );
      });
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

  /** A 2026-07-28 server's rounds pause a call (any replica continues it) where the face can continue it. */
  const pausing = settings.questions !== undefined && settings.ledger !== undefined;

  const handler: McpHttpHandler = createMcpHandler(
    async (ctx) => serverFor(callerOf(ctx.authInfo), handleOfHeader(ctx.requestInfo)),
    { legacy: "reject", onerror: settings.onError },
  );

  /** The surface states whose answered read runs now (a concurrent replay on this replica waits for none). */
  const answering = new Set<string>();
  /** A read under `approval` asks by round trip; its retry's verified answer lets it run once. */
  const surfaceRoundTrip = async (
    session: GatewaySession,
    method: string,
    request: { params?: Record<string, unknown> | undefined },
    rctx: ServerContext,
    run: (round: StatelessRound) => Promise<unknown>,
  ): Promise<unknown> => {
    const params = paramsOf(request);
    const expected = {
      kind: "surface" as const,
      tool: method,
      args: params,
      principal: session.principal,
      sessionId: session.sessionId,
    };
    const wire = rctx.mcpReq.requestState();
    let answer: boolean | undefined;
    let callId: string | undefined;
    if (wire !== undefined) {
      const verified = settings.codec.verify(wire, expected);
      if (!verified.ok) refuseRequestState(verified.reason);
      callId = verified.state.toolCallId;
      // Replayed: the read this state allowed (or refused) is running, or recorded under its id already.
      if (answering.has(callId)) refuseRequestState("replayed");
      answering.add(callId);
      if (await settings.ledger?.findByCall(session.threadId, callId)) {
        answering.delete(callId);
        refuseRequestState("replayed");
      }
      const given = rctx.mcpReq.inputResponses?.[APPROVAL_INPUT_KEY];
      if (given !== undefined) answer = isSurfaceApproved(given);
    }
    const round: StatelessRound = { ...roundOf(rctx), callId };
    if (supportsFormElicitation(round.capabilities)) {
      round.ask = async (question) => {
        if (answer !== undefined) return answer;
        throw new SurfaceInputRequired(question);
      };
    }
    const id = callId;
    try {
      return await run(round);
    } catch (error) {
      if (!(error instanceof SurfaceInputRequired)) throw error;
      return {
        resultType: "input_required",
        inputRequests: {
          [APPROVAL_INPUT_KEY]: {
            method: "elicitation/create",
            params: { mode: "form", ...surfaceApprovalForm(error.question) },
          },
        },
        requestState: settings.codec.mint({
          kind: "surface",
          toolCallId: callId ?? randomUUID(),
          tool: method,
          argsHash: argumentsHash(params),
          principal: session.principal ?? "",
          sessionId: session.sessionId,
        }),
      };
    } finally {
      if (id !== undefined) answering.delete(id);
    }
  };

  /** A held call's step as the round's answer: the call's result, or its question as `input_required`. */
  const heldAnswer = async (
    session: GatewaySession,
    call: { name: string; args: Record<string, unknown> },
    step: HeldStep<StatelessCallResult> | HeldStep<unknown>,
    answers: readonly ElicitResult[] = [],
  ): Promise<StatelessCallResult> => {
    if (step.kind === "failed") {
      if (isUpstreamPause(step.error)) return pausedAnswer(session, call, step.error, answers);
      throw step.error;
    }
    if (step.kind === "done") return step.result as StatelessCallResult;
    return {
      resultType: "input_required",
      inputRequests: {
        [step.question.key]: {
          method: step.question.method as "elicitation/create",
          params: step.question.params,
        },
      },
      requestState: settings.codec.mint({
        kind: "upstream",
        toolCallId: step.call,
        seq: step.seq,
        ...(step.question.era === undefined ? {} : { upstreamEra: step.question.era }),
        tool: call.name,
        argsHash: argumentsHash(call.args),
        principal: session.principal ?? "",
        sessionId: session.sessionId,
      }),
    };
  };

  /**
   * A call paused at its upstream server's round, as `input_required`: the recorded question, and a
   * state that carries the answers given so far.
   */
  const pausedAnswer = (
    session: GatewaySession,
    call: { name: string; args: Record<string, unknown> },
    pause: GovernanceError,
    answers: readonly ElicitResult[],
    invalid?: string,
  ): StatelessCallResult => {
    const data = pause.data as { toolCallId?: unknown; questions?: UpstreamQuestion[] } | undefined;
    const question = data?.questions?.[answers.length];
    if (typeof data?.toolCallId !== "string" || question === undefined) throw pause;
    const params = question.params as Record<string, unknown>;
    return {
      resultType: "input_required",
      inputRequests: {
        [pausedKey(question.index)]: {
          method: "elicitation/create",
          params:
            invalid === undefined
              ? params
              : { ...params, message: `${invalid}\n\n${String(params.message)}` },
        },
      },
      requestState: settings.codec.mint({
        kind: "paused",
        toolCallId: data.toolCallId,
        answers: [...answers],
        upstreamEra: question.era,
        tool: call.name,
        argsHash: argumentsHash(call.args),
        principal: session.principal ?? "",
        sessionId: session.sessionId,
      }),
    };
  };

  /**
   * Continues a paused call on this replica, whichever asked: the state must verify, the call must have
   * no row yet and its recorded questions must stop at the one this state asks (else it was answered
   * already). A missing, malformed or too long answer asks the same question again; the broker claims
   * the continuation once, so two retries of one state never both run it.
   */
  const resumePaused = async (
    session: GatewaySession,
    call: StatelessCallOf & { capabilities: StatelessCall["capabilities"] },
    extra: GatewayRequestExtra,
  ): Promise<StatelessCallResult> => {
    const verified = settings.codec.verify(call.requestState, {
      kind: "paused",
      tool: call.name,
      args: call.args,
      principal: session.principal,
      sessionId: session.sessionId,
    });
    if (!verified.ok) refuseRequestState(verified.reason);
    const { toolCallId } = verified.state;
    const answers = (verified.state.answers ?? []) as ElicitResult[];
    if (settings.questions === undefined || settings.ledger === undefined) {
      refuseRequestState("this gateway does not continue paused calls");
    }
    if (await settings.ledger.findByCall(session.threadId, toolCallId)) refuseRequestState("replayed");
    const questions = await settings.questions(session.threadId, toolCallId);
    if (questions.length > answers.length + 1) {
      refuseRequestState("replayed: that question was answered already");
    }
    const question = questions[answers.length];
    if (question === undefined) refuseRequestState("the question it answers is not recorded");
    const pause = new GovernanceError("INPUT_REQUIRED", "The upstream server's question is unanswered.", {
      data: { toolCallId, questions },
    });
    const given = parseUpstreamAnswer(call.inputResponses?.[pausedKey(question.index)], question, {
      name: call.name,
      sourceId: "",
      toolId: "",
      toolCallId,
    });
    if (!given.success) {
      return pausedAnswer(session, call, pause, answers, `The answer was not used: ${given.issues}.`);
    }
    const all = [...answers, given.result];
    if (JSON.stringify(all).length > MAX_CARRIED_ANSWER_CHARS) {
      return pausedAnswer(
        session,
        call,
        pause,
        answers,
        `The answers to this call's questions may take ${MAX_CARRIED_ANSWER_CHARS} characters of JSON in all; answer more briefly.`,
      );
    }
    const rounds = { answers: all };
    return heldAnswer(
      session,
      call,
      await settings.held.start(extra, (held) =>
        session.callTool(call.name, call.args, held, { toolCallId, ask: false, rounds }),
      ),
      all,
    );
  };

  const resumeHeld = async (
    session: GatewaySession,
    call: StatelessCallOf,
    extra: GatewayRequestExtra,
  ): Promise<StatelessCallResult> => {
    const verified = settings.codec.verify(call.requestState, {
      kind: "upstream",
      tool: call.name,
      args: call.args,
      principal: session.principal,
      sessionId: session.sessionId,
    });
    if (!verified.ok) refuseRequestState(verified.reason);
    const step = await settings.held.resume(
      verified.state.toolCallId,
      verified.state.seq ?? -1,
      call.inputResponses,
      extra,
    );
    if (step.kind === "refused") {
      refuseRequestState(
        step.reason === "not_held" ? notHeldReason(verified.state.upstreamEra) : HELD_REFUSALS[step.reason],
      );
    }
    return heldAnswer(session, call, step);
  };

  const listen = listenGovernance(settings.subscriptions, handler.notify);
  /** Open listen streams per user (`""`: the single user). */
  const listening = new Map<string, number>();
  const maxListens = settings.maxListensPerUser ?? DEFAULT_MAX_LISTENS_PER_USER;
  /** Counts a body's listens against its user until its response closes; a refusal when over. */
  const holdListens = (caller: StatelessCaller, body: unknown, signal: AbortSignal): Response | undefined => {
    const messages = (Array.isArray(body) ? body : [body]) as Array<{
      id?: unknown;
      method?: unknown;
    } | null>;
    const listens = messages.filter((message) => message?.method === "subscriptions/listen");
    const user = caller.user ?? "";
    const open = listening.get(user) ?? 0;
    if (open + listens.length > maxListens) {
      settings.onError(new Error(`subscriptions/listen refused: ${maxListens} streams open for one user`));
      const errors = listens.map((message) => ({
        jsonrpc: "2.0",
        id: message?.id ?? null,
        error: {
          code: -32603,
          message: `Subscription limit reached: a user may hold ${maxListens} listen streams open on this gateway`,
        },
      }));
      return Response.json(Array.isArray(body) ? errors : errors[0], { status: 200 });
    }
    listening.set(user, open + listens.length);
    const release = () => {
      const left = (listening.get(user) ?? listens.length) - listens.length;
      if (left > 0) listening.set(user, left);
      else listening.delete(user);
    };
    if (signal.aborted) release();
    else signal.addEventListener("abort", release, { once: true });
    return undefined;
  };
  /** The session a listen stream belongs to; `undefined` for an invalid conversation handle. */
  const listenerOf = (request: Request | undefined, caller: StatelessCaller, body: unknown) => {
    try {
      const named = (body as { params?: { _meta?: Record<string, unknown> } }).params?._meta?.[
        CONVERSATION_META_KEY
      ];
      const handle = named === undefined ? handleOfHeader(request) : checkHandle(named);
      const session = sessionOf(caller, handle);
      return { sessionId: session.sessionId, principal: session.principal };
    } catch {
      return undefined;
    }
  };

  return {
    fetch: async (request, caller, parsedBody) => {
      const authInfo = { token: "", clientId: caller.user ?? "", scopes: [], extra: { caller } };
      // A listen stream's subscriptions are governed before the SDK's router honours them.
      const body =
        parsedBody ??
        (await request
          .clone()
          .json()
          .catch(() => undefined));
      if (body !== undefined && isListenBody(body)) {
        const refused = holdListens(caller, body, request.signal);
        if (refused !== undefined) return refused;
        const message = Array.isArray(body) ? body[0] : body;
        const governed = await listen.govern(body, listenerOf(request, caller, message), request.signal);
        return handler.fetch(request, { authInfo, parsedBody: governed });
      }
      return handler.fetch(request, { authInfo, ...(body === undefined ? {} : { parsedBody: body }) });
    },
    server: (caller) => serverFor(caller, DEFAULT_CONVERSATION),
    stdioListen: (caller, server) => {
      const send = (notify: (to: Server) => Promise<void>) => {
        const to = server();
        if (to !== undefined) void notify(to).catch(settings.onError);
      };
      const governance = listenGovernance(settings.subscriptions, {
        toolsChanged: () => send((to) => to.sendToolListChanged()),
        promptsChanged: () => send((to) => to.sendPromptListChanged()),
        resourcesChanged: () => send((to) => to.sendResourceListChanged()),
        resourceUpdated: (uri) => send((to) => to.sendResourceUpdated({ uri })),
      });
      return {
        // A pipe has no headers: the listen's `_meta` names its conversation, else `default`.
        govern: (request, signal) =>
          governance.govern(request, listenerOf(undefined, caller, request), signal),
        close: () => governance.close(),
      };
    },
    toolsChanged: () => handler.notify.toolsChanged(),
    close: async () => {
      settings.held.close();
      listen.close();
      await handler.close();
    },
  };
}

/** What a held call's retry brings. */
interface StatelessCallOf {
  name: string;
  args: Record<string, unknown>;
  inputResponses: Record<string, unknown> | undefined;
  requestState: unknown;
}

/**
 * The longest JSON of a paused call's answers, all carried in its state (which must stay under
 * `MAX_REQUEST_STATE_CHARS` once encoded and signed).
 */
const MAX_CARRIED_ANSWER_CHARS = 32_768;

/** The key of a paused call's question in `inputRequests` and `inputResponses`. */
function pausedKey(index: number): string {
  return `upstream_${index}`;
}

/** What each refusal of a held call's retry tells the client. */
const HELD_REFUSALS = {
  stale: "replayed: that question was answered already",
  busy: "another retry of this call is being answered",
} as const;

/**
 * Why a retry finds no held call. A 2025-11-25 server's question (or a sampling) is a request in
 * flight on one connection of the replica that asked: it cannot move, so the refusal says so.
 * @param era the revision the upstream server asked in, as the verified state names it
 */
function notHeldReason(era: string | undefined): string {
  const held =
    "the upstream call it continues is not held by this gateway replica: it ended, its question timed out, or it is held by another replica (the retry of an upstream question must reach the replica that asked it)";
  if (era === "2025-11-25") {
    return `${held}; the upstream server (MCP 2025-11-25) asked mid-call, over its open request on that replica's connection, which cannot move to another replica: route retries to the replica that asked (sticky on requestState) or run one replica`;
  }
  if (era === "2026-07-28") {
    return `${held}; the upstream server (MCP 2026-07-28) asked for a sampling, which this gateway holds on the replica that asked`;
  }
  return held;
}

/** Listen streams one user may hold open on one replica over HTTP (a stdio pipe holds as many). */
const DEFAULT_MAX_LISTENS_PER_USER = 64;

/** Methods of a 2025-11-25 session that the 2026-07-28 revision does not have. */
const SESSION_ONLY_METHODS = new Set(["resources/subscribe", "resources/unsubscribe", "logging/setLevel"]);
/** The surface methods that may answer `input_required` (so may ask under an `approval` policy). */
const ASKING_METHODS = new Set(["prompts/get", "resources/read"]);

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

/** What a 2026-07-28 request declares in its `_meta`: the client's capabilities and log level. */
function roundOf(ctx: ServerContext): StatelessRound {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return {
    capabilities: capabilitiesOf(ctx),
    logLevel: envelope?.[LOG_LEVEL_META_KEY] as LoggingLevel | undefined,
  };
}

function capabilitiesOf(ctx: ServerContext): ClientCapabilities | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
}

/** A request's params without `_meta` (what a state binds: the read itself). */
function paramsOf(request: { params?: Record<string, unknown> | undefined }): Record<string, unknown> {
  const { _meta, ...params } = request.params ?? {};
  return params;
}

/**
 * A 2026 request's context as the request of a session method, marked as a round (its capabilities,
 * log level and way of asking): it cannot carry server-to-client requests.
 */
function extraOf(ctx: ServerContext, round: StatelessRound): GatewayRequestExtra {
  return withRound(
    {
      signal: ctx.mcpReq.signal,
      requestId: ctx.mcpReq.id,
      ...(ctx.mcpReq._meta === undefined ? {} : { _meta: ctx.mcpReq._meta }),
      sendNotification: (notification: unknown) => ctx.mcpReq.notify(notification as never),
      sendRequest: () =>
        Promise.reject(
          new ProtocolError(-32601, "A 2026-07-28 request cannot carry server-to-client requests"),
        ),
    } as unknown as GatewayRequestExtra,
    round,
  );
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
