/**
 * What an upstream server asks during a governed call, on the broker's side (ARCHITECTURE.md "Upstream
 * requests"). A caller that answers at once (the gateway) passes a relay. A caller that must pause for
 * a person (a LangGraph task; the gateway for a 2026-07-28 server's round, by a `pause` function that
 * picks the questions) passes `pause`: the first unanswered question is recorded (an
 * authorization row naming the question's object) and the invocation ends with `INPUT_REQUIRED` and no
 * invocation row; the caller asks the person and invokes the same call again with the answers, in order.
 * That invocation claims the continuation once (a second row, unique per number of answers, so two
 * replicas never both continue it), runs on the authorization of the call that asked, and answers the
 * server's questions from the recorded answers: a 2025-11-25 server runs the call again and must ask
 * the same questions; a 2026-07-28 call continues from its recorded round. Sampling is answered by the
 * caller's relay or the app's model, and each answer is recorded too.
 */
import { createHash } from "node:crypto";
import type {
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestParams,
} from "@modelcontextprotocol/client";
import { type Clock, GovernanceError, hashCanonical, isGovernanceError, optional } from "../../core/index.js";
import type {
  ContinuedRound,
  InputRound,
  ProtocolEra,
  UpstreamRelay,
  UpstreamRequestContext,
} from "../../mcp/index.js";
import {
  type ContentObject,
  type ContentStore,
  jsonObject,
  type LedgerReader,
  type LedgerWriter,
  stageObject,
} from "../audit/index.js";
import type { InvokeRequest, UpstreamQuestion } from "./broker-types.js";

/** Most questions one call may ask before it counts as looping. */
const MAX_QUESTIONS = 64;

/**
 * Answers a server's sampling request with the app's model.
 * @param params the server's request
 * @param signal ends with the call
 * @returns the model's answer
 */
export type UpstreamSampler = (
  params: CreateMessageRequestParams,
  signal: AbortSignal,
) => Promise<CreateMessageResult>;

/** What `UpstreamInputs` needs of the broker. */
export interface UpstreamInputsOptions {
  /** Where the question rows go (and are read back from). */
  ledger: LedgerWriter;
  store: ContentStore;
  clock: Clock;
  newId: () => string;
  /** The session's permission epoch, stamped on the rows. */
  epoch: (sessionId: string) => Promise<number>;
  /** The app's model, for sampling requests no relay answers. */
  sampler: UpstreamSampler | undefined;
}

/** A recorded question: what the server asked, and the call it belongs to. */
interface QuestionRecord extends UpstreamQuestion {
  kind: "sciencegate.upstream_question";
  sessionId: string;
  sourceId: string;
  toolId: string;
  inputHash: string;
  authorizationId?: string | undefined;
  round?: InputRound | undefined;
}

/** The call a relay works for. */
export interface UpstreamCall {
  request: InvokeRequest;
  sourceId: string;
  toolId: string;
  input: Record<string, unknown>;
  authorizationId: string | undefined;
  /** Writes the authorization row when the permission hook left it to the call (see `Call`). */
  commitAuthorization?: (() => Promise<void>) | undefined;
}

/** How a continuation runs: on its question's authorization, from its recorded round. */
export interface Continuation {
  authorizationId: string | undefined;
  continueFrom: ContinuedRound | undefined;
  questions: readonly QuestionRecord[];
}

/** Pause errors made here (a copy of the error, made by a retry, keeps one as its cause). */
const pauses = new WeakSet<object>();

/**
 * Whether an error is a pause for upstream input made by a broker: the invocation then records no row.
 * @param error anything an invocation threw
 * @returns true for `INPUT_REQUIRED` errors whose cause chain holds a pause
 */
export function isUpstreamPause(error: unknown): error is GovernanceError {
  if (!isGovernanceError(error) || error.code !== "INPUT_REQUIRED") return false;
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    if (pauses.has(current)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Whether a call paused for upstream input: its invocation that asked recorded a question (and so was
 * authorized), though the call has no invocation row yet.
 * @param ledger where the question rows are
 * @param threadId the call's thread
 * @param toolCallId the call's id
 * @returns true once the call's first question is recorded
 */
export async function hasUpstreamQuestions(
  ledger: Pick<LedgerReader, "getAuthorization">,
  threadId: string,
  toolCallId: string,
): Promise<boolean> {
  return (await ledger.getAuthorization(questionId(threadId, toolCallId, 1))) !== undefined;
}

/** The broker's side of upstream requests (see the module documentation). */
export class UpstreamInputs {
  readonly #o: UpstreamInputsOptions;

  /** @param options ledger, store, clock, ids, epochs and the app's model */
  constructor(options: UpstreamInputsOptions) {
    this.#o = options;
  }

  /**
   * The questions recorded for a call, in order.
   * @param threadId the call's thread
   * @param toolCallId the call's id
   * @returns what the server asked, first question first; empty when it asked nothing that paused
   */
  async questions(threadId: string, toolCallId: string): Promise<UpstreamQuestion[]> {
    return (await this.#records(threadId, toolCallId)).map(publicQuestion);
  }

  /**
   * Claims the continuation of a call that paused: the answers must answer questions recorded for this
   * very call (session, source, tool, arguments), and only one invocation may continue with them.
   * @param call the call and its validated arguments
   * @returns how it runs, or `undefined` when the request carries no answers
   * @throws GovernanceError `PERMISSION_DENIED` when the answers do not belong to this call;
   *   `{runningElsewhere: true}` when another invocation claimed this continuation first
   */
  async claim(
    call: Omit<UpstreamCall, "authorizationId">,
  ): Promise<Continuation | { runningElsewhere: true } | undefined> {
    const { request } = call;
    const answers = request.upstream?.answers ?? [];
    if (answers.length === 0) return undefined;
    const { threadId, toolCallId } = request;
    if (threadId === undefined || toolCallId === undefined) {
      throw new GovernanceError(
        "PERMISSION_DENIED",
        "Answers to upstream questions need the call's thread and tool call id.",
      );
    }
    const records = await this.#records(threadId, toolCallId);
    const inputHash = hashCanonical(call.input);
    const foreign = records
      .slice(0, answers.length)
      .some(
        (record) =>
          record.sessionId !== request.sessionId ||
          record.sourceId !== call.sourceId ||
          record.toolId !== call.toolId ||
          record.inputHash !== inputHash,
      );
    if (records.length < answers.length || foreign) {
      throw new GovernanceError(
        "PERMISSION_DENIED",
        `The answers given do not answer questions the server asked during this call (tool call '${toolCallId}'); nothing was sent.`,
        { data: { reason: "answers_not_recorded", toolCallId } },
      );
    }
    const answered = records.slice(0, answers.length);
    const first = answered[0] as QuestionRecord;
    const claimed = await this.#append(call, "upstream_input", "user_answered", answers, {
      id: `resumed:${callKey(threadId, toolCallId)}:${answers.length}`,
    });
    if (!claimed) return { runningElsewhere: true };
    return {
      authorizationId: first.authorizationId,
      continueFrom: continuedRound(answered),
      questions: answered,
    };
  }

  /**
   * The relay the pool hands a call's server requests to: recorded answers first, then a pause the
   * caller asks for this question, then the caller's relay, then (when the caller pauses) a recorded
   * question and `INPUT_REQUIRED`, else `cancel`.
   * @param call the call, its arguments and authorization
   * @param continuation the claimed continuation, when the call resumes
   * @returns the relay for `PoolCallOptions.relay`
   */
  relayFor(call: UpstreamCall, continuation: Continuation | undefined): UpstreamRelay {
    const upstream = call.request.upstream;
    const answers = upstream?.answers ?? [];
    const relay: UpstreamRelay = {
      elicit: async (params, context) => {
        const answer = answers[context.index - 1];
        if (answer !== undefined) {
          const asked = continuation?.questions[context.index - 1];
          if (asked?.fingerprint !== questionFingerprint(params)) throw changedQuestion(call, context.index);
          return answer;
        }
        if (typeof upstream?.pause === "function" && upstream.pause(params, context)) {
          throw await this.#pause(call, params, context);
        }
        if (upstream?.relay?.elicit) return upstream.relay.elicit(params, context);
        if (upstream?.pause !== true) return { action: "cancel" };
        throw await this.#pause(call, params, context);
      },
      sample: (params, context) => this.#sample(call, params, context),
    };
    const onLog = upstream?.relay?.onLog;
    if (onLog !== undefined) relay.onLog = onLog;
    return relay;
  }

  /** Records the question and makes the pause that ends the invocation. */
  async #pause(
    call: UpstreamCall,
    params: ElicitRequestParams,
    context: UpstreamRequestContext,
  ): Promise<GovernanceError> {
    const { threadId, toolCallId } = call.request;
    if (threadId === undefined || toolCallId === undefined || context.index > MAX_QUESTIONS) {
      return new GovernanceError(
        "PERMISSION_DENIED",
        context.index > MAX_QUESTIONS
          ? `MCP server '${context.serverId}' asked more than ${MAX_QUESTIONS} questions in one call.`
          : "An upstream question needs the call's thread and tool call id to be asked later.",
      );
    }
    const record: QuestionRecord = {
      kind: "sciencegate.upstream_question",
      index: context.index,
      serverId: context.serverId,
      era: context.era,
      params,
      fingerprint: questionFingerprint(params),
      sessionId: call.request.sessionId,
      sourceId: call.sourceId,
      toolId: call.toolId,
      inputHash: hashCanonical(call.input),
      ...optional({ authorizationId: call.authorizationId, round: context.round }),
    };
    const id = questionId(threadId, toolCallId, context.index);
    const added = await this.#append(call, "upstream_input", "upstream_asked", record, { id });
    const records = await this.#records(threadId, toolCallId);
    // Asked before (a task that ran again without its answers): the same question pauses again.
    if (!added && records[context.index - 1]?.fingerprint !== record.fingerprint) {
      return changedQuestion(call, context.index);
    }
    const pause = new GovernanceError(
      "INPUT_REQUIRED",
      `MCP server '${context.serverId}' asks: ${messageOf(params)}`,
      { data: { threadId, toolCallId, questions: records.slice(0, context.index).map(publicQuestion) } },
    );
    pauses.add(pause);
    return pause;
  }

  async #sample(
    call: UpstreamCall,
    params: CreateMessageRequestParams,
    context: UpstreamRequestContext,
  ): Promise<CreateMessageResult> {
    const answer = call.request.upstream?.relay?.sample;
    if (answer !== undefined) return answer(params, context);
    const sampler = this.#o.sampler;
    if (sampler === undefined) {
      await this.#append(call, "sampling", "sampling_refused", { request: params });
      throw new GovernanceError(
        "UPSTREAM_UNAVAILABLE",
        `MCP server '${context.serverId}' asked for a sampling (an LLM completion), which Sciencegate answers only with a model the app provides: createGovernance({ sampling: { model } }).`,
      );
    }
    const result = await sampler(params, context.signal);
    await this.#append(call, "sampling", "sampling_model", { request: params, response: result });
    return result;
  }

  async #records(threadId: string, toolCallId: string): Promise<QuestionRecord[]> {
    const records: QuestionRecord[] = [];
    for (let index = 1; index <= MAX_QUESTIONS; index++) {
      const row = await this.#o.ledger.reader.getAuthorization(questionId(threadId, toolCallId, index));
      if (row === undefined) break;
      records.push(await this.#o.store.getJson<QuestionRecord>(row.resource));
    }
    return records;
  }

  /**
   * Appends an authorization row whose `resource` is the ref of `object`.
   * @returns false when `options.id` is already recorded
   */
  async #append(
    call: Pick<UpstreamCall, "request" | "sourceId" | "toolId" | "commitAuthorization">,
    action: string,
    decisionSource: string,
    object: unknown,
    options: { id?: string } = {},
  ): Promise<boolean> {
    const { request } = call;
    // A row that names the call's authorization never lands before it.
    await call.commitAuthorization?.();
    // Kept with its row where the ledger keeps objects: a replica that continues the call reads it there.
    const inline: ContentObject[] = [];
    const ref = await stageObject(this.#o.ledger.maxInlineBytes, this.#o.store, inline, jsonObject(object));
    try {
      await this.#o.ledger.appendAuthorization(
        {
          id: options.id ?? this.#o.newId(),
          sessionId: request.sessionId,
          ...optional({ principal: request.principal }),
          sourceId: call.sourceId,
          toolId: call.toolId,
          action,
          resource: ref,
          decisionSource,
          createdAt: new Date(this.#o.clock.now()).toISOString(),
          epoch: await this.#o.epoch(request.sessionId),
          ...optional({ threadId: request.threadId, toolCallId: request.toolCallId }),
        },
        inline,
      );
      return true;
    } catch (error) {
      if (options.id !== undefined && isGovernanceError(error) && error.code === "DUPLICATE_ID") return false;
      throw error;
    }
  }
}

/**
 * What identifies a question: its mode, message, schema and URL, so that an answer is only ever given to
 * the question it was given for.
 * @param params the server's elicitation
 * @returns a hash of its canonical JSON
 */
export function questionFingerprint(params: ElicitRequestParams): string {
  const { mode, message, requestedSchema, url } = params as ElicitRequestParams & {
    requestedSchema?: unknown;
    url?: string;
  };
  return hashCanonical({
    mode: mode ?? "form",
    message,
    requestedSchema: requestedSchema ?? null,
    url: url ?? null,
  });
}

function publicQuestion(record: QuestionRecord): UpstreamQuestion {
  return {
    index: record.index,
    serverId: record.serverId,
    era: record.era,
    params: record.params,
    fingerprint: record.fingerprint,
  };
}

/** The round a 2026-07-28 continuation starts from: the last answered question's, if it has one. */
function continuedRound(answered: readonly QuestionRecord[]): ContinuedRound | undefined {
  const last = answered.at(-1);
  const round = last?.round;
  if (last === undefined || round === undefined || (last.era as ProtocolEra) !== "2026-07-28")
    return undefined;
  const first = answered.find(
    (record) => record.round?.index === round.index && record.round?.requestState === round.requestState,
  );
  return { ...round, questionsBefore: (first?.index ?? last.index) - 1 };
}

function changedQuestion(call: UpstreamCall, index: number): GovernanceError {
  return new GovernanceError(
    "PERMISSION_DENIED",
    `The server asked question ${index} of this call differently than when it was answered, so the recorded answer was not given to it; nothing more was sent. Call the tool again to be asked anew.`,
    { data: { reason: "question_changed", toolCallId: call.request.toolCallId, index } },
  );
}

function messageOf(params: ElicitRequestParams): string {
  const url = (params as { url?: unknown }).url;
  return typeof url === "string" ? `${params.message} (${url})` : params.message;
}

function callKey(threadId: string, toolCallId: string): string {
  return createHash("sha256").update(`${threadId}\n${toolCallId}`).digest("hex").slice(0, 32);
}

function questionId(threadId: string, toolCallId: string, index: number): string {
  return `question:${callKey(threadId, toolCallId)}:${index}`;
}
