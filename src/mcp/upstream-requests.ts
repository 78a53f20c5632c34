/**
 * What an upstream server asks or tells while a tool call runs, brought to that call's relay: the
 * elicitation, sampling and roots requests a 2025-era server sends mid-call, the questions a
 * 2026-07-28 server returns as an `input_required` result, and log messages (ARCHITECTURE.md
 * "Upstream requests").
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Client,
  type ClientCapabilities,
  type CreateMessageRequestParams,
  type ElicitRequestParams,
  type ElicitResult,
  type InputRequests,
  type LoggingMessageNotificationParams,
  ProtocolError,
  ProtocolErrorCode,
} from "@modelcontextprotocol/client";
import { GovernanceError } from "../core/index.js";
import type { InputRound, ProtocolEra, UpstreamRelay, UpstreamRequestContext } from "./types.js";

/** What the pool declares it answers, and the answers that do not depend on the call. */
export interface UpstreamRequestOptions {
  /** Whether `sampling` is declared: callers' relays (or the app's model behind them) answer it. */
  sampling: boolean;
  /** The elicitation modes declared. */
  elicitation: { form: boolean; url: boolean };
  /** The roots (`file://` URIs) of this server. */
  roots: readonly string[];
  /** Receives log messages that belong to no call (sent between calls, or not attributable). */
  onServerLog?: ((params: LoggingMessageNotificationParams) => void) | undefined;
}

/**
 * The client capabilities the pool declares: roots always (an empty or configured list), elicitation
 * in the modes it can relay (form answers get the schema's defaults applied), sampling only when asked.
 * @param options what the pool answers
 * @returns the capabilities for `initialize` and the 2026-07-28 request envelope
 */
export function clientCapabilities(options: UpstreamRequestOptions): ClientCapabilities {
  const { form, url } = options.elicitation;
  return {
    roots: {},
    ...(form || url
      ? { elicitation: { ...(form ? { form: { applyDefaults: true } } : {}), ...(url ? { url: {} } : {}) } }
      : {}),
    ...(options.sampling ? { sampling: {} } : {}),
  };
}

/** One tool call's side of the upstream requests: its relay, its questions, and how it ends. */
export class CallScope {
  readonly relay: UpstreamRelay | undefined;
  readonly serverId: string;
  /** Aborts the SDK request: the caller cancelled, the answer was too large, or a relay failed. */
  readonly controller = new AbortController();
  /** The questions asked so far in this call (across rounds), for `UpstreamRequestContext.index`. */
  questions: number;
  /** The 2026-07-28 round being answered, if any. */
  round: InputRound | undefined;
  #failure: { error: unknown } | undefined;

  /**
   * @param serverId the server's id
   * @param relay the caller's answers
   * @param questionsBefore questions already asked in earlier attempts of this call (a continued round)
   */
  constructor(serverId: string, relay: UpstreamRelay | undefined, questionsBefore = 0) {
    this.serverId = serverId;
    this.relay = relay;
    this.questions = questionsBefore;
  }

  /** The error that ended the call from this side, if one did. */
  get failure(): { error: unknown } | undefined {
    return this.#failure;
  }

  /** Ends the call with `error` (the first one wins) and cancels its request upstream. */
  fail(error: unknown): void {
    if (this.#failure !== undefined) return;
    this.#failure = { error };
    this.controller.abort(error);
  }

  /** The context handed to the relay for one request. */
  context(era: ProtocolEra, isQuestion: boolean): UpstreamRequestContext {
    if (isQuestion) this.questions++;
    return {
      serverId: this.serverId,
      era,
      signal: this.controller.signal,
      index: this.questions,
      ...(era === "2026-07-28" && this.round !== undefined ? { round: this.round } : {}),
    };
  }
}

/** The scope of the call whose requests are being sent (for requests that arrive on its HTTP stream). */
const currentScope = new AsyncLocalStorage<CallScope>();

/**
 * Runs one call so that server requests arriving on its own response stream are attributed to it.
 * @param scope the call's scope
 * @param run the call
 * @returns what `run` returns
 */
export function withCallScope<T>(scope: CallScope, run: () => Promise<T>): Promise<T> {
  return currentScope.run(scope, run);
}

/**
 * Sets the handlers of a 2025-era connection's server requests and log messages. A request is the
 * call's whose response stream it came on (HTTP), else the one call in flight; with several calls in
 * flight over stdio it cannot be attributed, and is answered as if no human could be asked.
 * @param client the client of one connection attempt (before it connects)
 * @param options what the pool declares and the server's roots
 * @param inFlight the calls in flight on the connection
 */
export function handleServerRequests(
  client: Client,
  options: UpstreamRequestOptions,
  inFlight: ReadonlySet<CallScope>,
): void {
  const scopeOf = (): CallScope | undefined => {
    const own = currentScope.getStore();
    if (own !== undefined) return own;
    if (inFlight.size !== 1) return undefined;
    return inFlight.values().next().value;
  };
  if (options.elicitation.form || options.elicitation.url) {
    client.setRequestHandler("elicitation/create", async (request) => {
      const scope = scopeOf();
      if (scope === undefined) return { action: "cancel" };
      return elicit(scope, request.params as ElicitRequestParams, "2025-11-25");
    });
  }
  if (options.sampling) {
    client.setRequestHandler("sampling/createMessage", async (request) => {
      const scope = scopeOf();
      if (scope === undefined) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          "Sciencegate cannot tell which tool call this sampling request belongs to (several calls run at once), so it is refused.",
        );
      }
      try {
        return await sample(scope, request.params as CreateMessageRequestParams, "2025-11-25");
      } catch (error) {
        if (error instanceof GovernanceError)
          throw new ProtocolError(ProtocolErrorCode.InvalidRequest, error.message);
        throw error;
      }
    });
  }
  client.setRequestHandler("roots/list", async () => ({ roots: rootsOf(options.roots) }));
  client.setNotificationHandler("notifications/message", (notification) => {
    const params = notification.params as LoggingMessageNotificationParams;
    const onLog = scopeOf()?.relay?.onLog ?? options.onServerLog;
    try {
      onLog?.(params);
    } catch {
      // A listener's failure must not break the connection.
    }
  });
}

/**
 * Answers one `input_required` round of a 2026-07-28 call through its relay.
 * @param scope the call's scope
 * @param inputRequests the round's embedded requests, by key
 * @param options what the pool declares and the server's roots
 * @returns the `inputResponses` of the retry
 * @throws GovernanceError `UPSTREAM_UNAVAILABLE` for a request the pool does not answer (an unknown
 *   method, or sampling when it is not declared); a relay's own error when it cannot answer
 */
export async function answerInputRequests(
  scope: CallScope,
  inputRequests: InputRequests | undefined,
  options: UpstreamRequestOptions,
): Promise<Record<string, unknown>> {
  const responses: Record<string, unknown> = {};
  for (const [key, request] of Object.entries(inputRequests ?? {})) {
    const { method, params } = request as { method: string; params?: unknown };
    if (method === "elicitation/create") {
      responses[key] = await elicit(scope, params as ElicitRequestParams, "2026-07-28");
    } else if (method === "sampling/createMessage" && options.sampling) {
      responses[key] = await sample(scope, params as CreateMessageRequestParams, "2026-07-28");
    } else if (method === "roots/list") {
      responses[key] = { roots: rootsOf(options.roots) };
    } else {
      throw new GovernanceError(
        "UPSTREAM_UNAVAILABLE",
        `MCP server '${scope.serverId}' asked for '${method}' input, which Sciencegate ${method === "sampling/createMessage" ? "does not answer without a model (createGovernance({ sampling: { model } }))" : "does not know"}.`,
        { data: { serverId: scope.serverId, method } },
      );
    }
  }
  return responses;
}

/** Asks the call's relay; a relay that throws ends the call, and the server hears `cancel`. */
async function elicit(
  scope: CallScope,
  params: ElicitRequestParams,
  era: ProtocolEra,
): Promise<ElicitResult> {
  const elicitWith = scope.relay?.elicit;
  if (elicitWith === undefined) {
    scope.context(era, true);
    return { action: "cancel" };
  }
  try {
    return await elicitWith(params, scope.context(era, true));
  } catch (error) {
    scope.fail(error);
    if (era === "2026-07-28") throw error;
    return { action: "cancel" };
  }
}

async function sample(scope: CallScope, params: CreateMessageRequestParams, era: ProtocolEra) {
  const sampleWith = scope.relay?.sample;
  if (sampleWith === undefined) {
    throw new GovernanceError(
      "UPSTREAM_UNAVAILABLE",
      `MCP server '${scope.serverId}' asked for a sampling (an LLM completion), which Sciencegate answers only with a model the app provides: createGovernance({ sampling: { model } }).`,
      { data: { serverId: scope.serverId, method: "sampling/createMessage" } },
    );
  }
  return sampleWith(params, scope.context(era, false));
}

function rootsOf(uris: readonly string[]) {
  return uris.map((uri) => ({ uri, name: decodeURIComponent(uri.slice(uri.lastIndexOf("/") + 1)) || uri }));
}
