/**
 * What an upstream server asks during a call, put to a person as an interrupt card in the call's own
 * task, in the same channel and shape as approval cards (ARCHITECTURE.md "Upstream requests"). The
 * broker pauses the call at the first unanswered question and records it; the task raises one card per
 * recorded question, in order (a resumed task gets its answers back from LangGraph, in any process), and
 * invokes the call again with the answers. The server's progress and log messages go to the task's
 * `custom` stream.
 */

import { interrupt, isGraphInterrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { ElicitResult } from "@modelcontextprotocol/client";
import { z } from "zod";
import { isGovernanceError } from "../core/index.js";
import type {
  Broker,
  InvokeOutcome,
  InvokeRequest,
  UpstreamInput,
  UpstreamQuestion,
} from "../governance/broker/index.js";
import { InputValidator } from "../governance/catalog/index.js";
import type { UpstreamRelay } from "../mcp/index.js";
import type { ApprovalCardFormat, HitlActionRequest, HitlReviewConfig } from "./hitl-protocol.js";

/** The card of one upstream question, as a native value (`cardFormat: "native"`) or under `sciencegate`. */
export interface UpstreamInputCard {
  type: "upstream_input";
  /** The MCP server that asks. */
  serverId: string;
  sourceId: string;
  toolId: string;
  toolCallId: string;
  /** 1 for the call's first question. */
  index: number;
  /** `form`: answer the fields of `requestedSchema`; `url`: visit `url`, then accept (or decline). */
  mode: "form" | "url";
  /** The server's words (third-party text: show it as such). */
  message: string;
  requestedSchema?: Record<string, unknown>;
  url?: string;
  /** Set when the card is asked again because the previous answer was malformed. */
  invalidResponse?: string;
}

/** An upstream question as an `hitl` card: langchain's `HITLRequest` of the call, the native card inside. */
export interface UpstreamInputHitlRequest {
  actionRequests: [HitlActionRequest];
  reviewConfigs: [HitlReviewConfig];
  sciencegate: UpstreamInputCard;
}

/** The call a card is about: the model-visible tool and where it runs. */
export interface UpstreamCallInfo {
  name: string;
  sourceId: string;
  toolId: string;
  toolCallId: string;
}

/** The native answer to an upstream question: the MCP elicitation result itself. */
const nativeAnswerSchema = z.discriminatedUnion("action", [
  z.object({ action: z.literal("accept"), content: z.record(z.string(), z.unknown()).optional() }),
  z.object({ action: z.literal("decline") }),
  z.object({ action: z.literal("cancel") }),
]);

const hitlAnswerSchema = z.object({
  decisions: z
    .array(
      z.discriminatedUnion("type", [
        z.object({ type: z.literal("approve") }).passthrough(),
        z.object({ type: z.literal("reject"), message: z.string().max(2_000).optional() }),
        z.object({
          type: z.literal("edit"),
          editedAction: z.object({ name: z.string(), args: z.record(z.string(), z.unknown()) }),
        }),
      ]),
    )
    .length(1, "answer exactly one decision per card"),
});

/** The JSON Schema of an answer (native or `hitl`), surfaced as the interrupt's `response_schema`. */
export const upstreamAnswerJsonSchema = z.toJSONSchema(
  z.union([nativeAnswerSchema, hitlAnswerSchema]),
) as Record<string, unknown>;

const validator = new InputValidator();

/**
 * The card of a question.
 * @param question what the server asked
 * @param call the tool call it belongs to
 * @param format the card shape of the executor (`hitl` by default)
 * @param invalidResponse why the last answer was refused, when asked again
 * @returns the interrupt value
 */
export function upstreamInputCard(
  question: UpstreamQuestion,
  call: UpstreamCallInfo,
  format: ApprovalCardFormat,
  invalidResponse?: string,
): UpstreamInputCard | UpstreamInputHitlRequest {
  const params = question.params as {
    mode?: string;
    message: string;
    requestedSchema?: Record<string, unknown>;
    url?: string;
  };
  const mode = params.mode === "url" ? "url" : "form";
  const card: UpstreamInputCard = {
    type: "upstream_input",
    serverId: question.serverId,
    sourceId: call.sourceId,
    toolId: call.toolId,
    toolCallId: call.toolCallId,
    index: question.index,
    mode,
    message: params.message,
    ...(params.requestedSchema === undefined ? {} : { requestedSchema: params.requestedSchema }),
    ...(params.url === undefined ? {} : { url: params.url }),
    ...(invalidResponse === undefined ? {} : { invalidResponse }),
  };
  if (format === "native") return card;
  const how =
    mode === "url"
      ? `Open ${params.url} and complete it, then approve; reject declines.`
      : "Approve answers with the values shown, edit answers with your own values; reject declines.";
  const description = [
    invalidResponse,
    `The MCP server '${question.serverId}' asks, while running ${call.name}: ${params.message}`,
    how,
  ]
    .filter((line) => line !== undefined)
    .join("\n");
  return {
    actionRequests: [
      { name: call.name, args: mode === "form" ? defaultsOf(params.requestedSchema) : {}, description },
    ],
    reviewConfigs: [
      {
        actionName: call.name,
        allowedDecisions: mode === "form" ? ["approve", "edit", "reject"] : ["approve", "reject"],
        ...(mode === "form" && params.requestedSchema !== undefined
          ? { argsSchema: params.requestedSchema }
          : {}),
      },
    ],
    sciencegate: card,
  };
}

/**
 * Validates a person's answer to a question card: native `{action, content?}`, or an `HITLResponse`
 * with one decision (`approve` answers the values shown, `edit` the edited ones, `reject` declines).
 * Accepted form content must match the question's schema.
 * @param answer the resume value
 * @param question the question
 * @param call the tool call (an edit must keep its name)
 * @returns the elicitation result to send, or why the answer is refused (the card then asks again):
 *   `error` for a card, `issues` alone for a caller with its own way to answer
 */
export function parseUpstreamAnswer(
  answer: unknown,
  question: UpstreamQuestion,
  call: UpstreamCallInfo,
): { success: true; result: ElicitResult } | { success: false; error: string; issues: string } {
  const params = question.params as { mode?: string; requestedSchema?: Record<string, unknown> };
  const isUrl = params.mode === "url";
  let result: ElicitResult;
  if (typeof answer === "object" && answer !== null && "decisions" in answer) {
    const parsed = hitlAnswerSchema.safeParse(answer);
    if (!parsed.success) return invalid(issuesOf(parsed.error));
    const decision = parsed.data.decisions[0] as z.output<typeof hitlAnswerSchema>["decisions"][number];
    if (decision.type === "reject") result = { action: "decline" };
    else if (decision.type === "approve") {
      result = isUrl
        ? { action: "accept" }
        : { action: "accept", content: defaultsOf(params.requestedSchema) as ElicitResult["content"] };
    } else {
      if (isUrl) return invalid("decisions.0.type: a URL question is approved or rejected, not edited");
      if (decision.editedAction.name !== call.name) {
        return invalid(`decisions.0.editedAction.name: an edit must keep the tool '${call.name}'`);
      }
      result = { action: "accept", content: decision.editedAction.args as ElicitResult["content"] };
    }
  } else {
    const parsed = nativeAnswerSchema.safeParse(answer);
    if (!parsed.success) return invalid(issuesOf(parsed.error));
    result = parsed.data as ElicitResult;
  }
  if (result.action === "accept" && !isUrl) {
    const schema = params.requestedSchema ?? { type: "object" };
    const checked = validator.validate(schema, result.content ?? {});
    if (!checked.ok) {
      return invalid(
        checked.issues.map((issue) => `${contentPath(issue.path)}: ${issue.message}`).join("; "),
      );
    }
  }
  return { success: true, result };
}

/** What `invokeAnsweringUpstream` needs to know about the task. */
export interface UpstreamTask {
  /** The task's config: its checkpointer (for cards) and custom stream writer. */
  config: LangGraphRunnableConfig | undefined;
  call: UpstreamCallInfo;
  /** The executor's card shape. @default "hitl" */
  cardFormat?: ApprovalCardFormat | undefined;
  /** A caller that answers at once instead (the gateway): no card is raised. */
  relay?: UpstreamRelay | undefined;
  /**
   * For a caller with a relay that continues some questions in a later request of its own (the
   * gateway's 2026-07-28 face): the questions `pause` picks end the invocation with the broker's
   * `INPUT_REQUIRED` pause, thrown to the caller, and `answers` are those given so far, in order.
   */
  resumable?: { pause: NonNullable<UpstreamInput["pause"]>; answers: readonly ElicitResult[] } | undefined;
}

/**
 * Runs a broker call whose upstream questions become cards: asks a person each recorded question in
 * order (one `interrupt()` each, after the approval card, before the call runs again), then invokes
 * with the answers; a new question pauses the call again. Progress and log messages of the server go
 * to the task's `custom` stream as `upstream_progress` and `upstream_log` events.
 * @param broker the broker
 * @param request the call
 * @param task the task's config, the call's names and the card shape
 * @returns the broker's outcome
 * @throws the LangGraph interrupt carrying a card; the broker's errors
 */
export async function invokeAnsweringUpstream(
  broker: Broker,
  request: InvokeRequest,
  task: UpstreamTask,
): Promise<InvokeOutcome> {
  const { config, call } = task;
  const writer = config?.writer;
  const onLog: UpstreamRelay["onLog"] =
    task.relay?.onLog ??
    (writer === undefined
      ? undefined
      : (params) =>
          writer({ type: "upstream_log", toolCallId: call.toolCallId, name: call.name, ...params }));
  const onProgress: InvokeRequest["onProgress"] =
    request.onProgress ??
    (writer === undefined
      ? undefined
      : (progress) =>
          writer({ type: "upstream_progress", toolCallId: call.toolCallId, name: call.name, ...progress }));
  const relay: UpstreamRelay | undefined = task.relay ?? (onLog === undefined ? undefined : { onLog });
  // The caller asks its own client and calls again with the answers: one invocation, its pause thrown.
  if (task.resumable !== undefined) {
    return broker.invoke({
      ...request,
      ...(onProgress === undefined ? {} : { onProgress }),
      upstream: { relay, pause: task.resumable.pause, answers: [...task.resumable.answers] },
    });
  }
  const pause = task.relay === undefined && canPause(config) && request.threadId !== undefined;
  let questions =
    pause && wasInterrupted(config) && request.threadId !== undefined && request.toolCallId !== undefined
      ? await broker.upstreamQuestions(request.threadId, request.toolCallId)
      : [];
  const answers: ElicitResult[] = [];
  for (;;) {
    for (const question of questions.slice(answers.length)) {
      answers.push(askPerson(question, call, task.cardFormat ?? "hitl"));
    }
    try {
      return await broker.invoke({
        ...request,
        ...(onProgress === undefined ? {} : { onProgress }),
        upstream: { relay, pause, answers: [...answers] },
      });
    } catch (error) {
      const asked = pausedWith(error);
      if (asked === undefined || asked.length <= answers.length) throw error;
      questions = asked;
    }
  }
}

/** One card per question; a malformed answer asks again (a new interrupt), never counts as an answer. */
function askPerson(
  question: UpstreamQuestion,
  call: UpstreamCallInfo,
  format: ApprovalCardFormat,
): ElicitResult {
  let invalidResponse: string | undefined;
  for (;;) {
    const answer: unknown = interrupt(upstreamInputCard(question, call, format, invalidResponse), {
      responseSchema: upstreamAnswerJsonSchema,
    });
    const parsed = parseUpstreamAnswer(answer, question, call);
    if (parsed.success) return parsed.result;
    invalidResponse = parsed.error;
  }
}

/** The questions of a broker pause, or undefined for any other error. */
function pausedWith(error: unknown): UpstreamQuestion[] | undefined {
  if (isGraphInterrupt(error) || !isGovernanceError(error) || error.code !== "INPUT_REQUIRED")
    return undefined;
  const questions = error.data?.questions;
  return Array.isArray(questions) ? (questions as UpstreamQuestion[]) : undefined;
}

/**
 * Whether the task can raise a card: it runs in a graph with a checkpointer. LangGraph keeps it under an
 * internal config key; without it a question is answered `cancel` instead of pausing the call.
 */
function canPause(config: LangGraphRunnableConfig | undefined): boolean {
  return config?.configurable?.__pregel_checkpointer !== undefined;
}

/**
 * Whether the task runs again after an interrupt (it has resume values): only then can the call have
 * recorded questions to ask again. LangGraph keeps them in an internal scratchpad; when its shape is
 * unknown the questions are read anyway, which costs one ledger read.
 */
function wasInterrupted(config: LangGraphRunnableConfig | undefined): boolean {
  const scratchpad: unknown = config?.configurable?.__pregel_scratchpad;
  if (typeof scratchpad !== "object" || scratchpad === null || !("resume" in scratchpad)) return true;
  const { resume } = scratchpad as { resume: unknown };
  return !Array.isArray(resume) || resume.length > 0;
}

/** The schema's defaults, as the values a card shows. */
function defaultsOf(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  const properties = schema?.properties;
  if (typeof properties !== "object" || properties === null) return {};
  const values: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(properties as Record<string, unknown>)) {
    if (typeof property === "object" && property !== null && "default" in property) {
      values[key] = (property as { default: unknown }).default;
    }
  }
  return values;
}

function issuesOf(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join(".") || "(value)"}: ${issue.message}`).join("; ");
}

/** Where in an answer's content an issue is (`content.name`, `content[0]`; `content` for the whole). */
function contentPath(path: string): string {
  return path === "" || path.startsWith("[") ? `content${path}` : `content.${path}`;
}

function invalid(issues: string): { success: false; error: string; issues: string } {
  return {
    success: false,
    issues,
    error: `Invalid answer (${issues}). Resume with {action: "accept", content?: {...}} | {action: "decline"} | {action: "cancel"}, or {decisions: [{type: "approve"} | {type: "edit", editedAction: {name, args}} | {type: "reject"}]}.`,
  };
}
