/**
 * A scripted chat model for tests and offline runs (the demo's, the LangGraph server example's, an
 * app's own tests): a real `BaseChatModel` whose every turn is a function of the messages so far, so a
 * later turn can use the real ids (invocation, candidate, job) that earlier tool results carried.
 * `bindTools` works as `createGovernedAgent` needs; the bound tools of each turn are recorded, as a
 * provider would receive them.
 */
import { randomUUID } from "node:crypto";
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BindToolsInput,
} from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

/** What the script answers in one turn: tool calls, or a final text. */
export type ScriptedReply =
  | { toolCalls: Array<{ name: string; args: Record<string, unknown> }> }
  | { text: string };

/** The script: the reply of turn `turn` (0-based), given every message the model was sent. */
export type ScriptedPolicy = (messages: BaseMessage[], turn: number) => ScriptedReply;

interface ScriptedCallOptions extends BaseChatModelCallOptions {
  tools?: BindToolsInput[];
}

/**
 * A chat model that plays a script; message and tool-call ids are unique per instance.
 * @example
 * const model = new ScriptedChatModel((messages, turn) =>
 *   turn === 0 ? { toolCalls: [{ name: "tool_search", args: { query: "pubmed" } }] } : { text: "done" },
 * );
 */
export class ScriptedChatModel extends BaseChatModel<ScriptedCallOptions> {
  /** The tool names bound in each turn, in order. */
  readonly boundTools: string[][] = [];
  readonly #policy: ScriptedPolicy;
  readonly #idPrefix: string;
  #turn = 0;

  /**
   * @param policy the reply of each turn
   * @param idPrefix prefix of message and tool-call ids @default a random one
   */
  constructor(policy: ScriptedPolicy, idPrefix = `scripted-${randomUUID().slice(0, 8)}`) {
    super({});
    this.#policy = policy;
    this.#idPrefix = idPrefix;
  }

  /** LangChain's model type tag: `scripted`. */
  _llmType(): string {
    return "scripted";
  }

  override bindTools(tools: BindToolsInput[]) {
    return this.withConfig({ tools });
  }

  /** Plays the next reply of the script (LangChain's generation hook). */
  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const turn = this.#turn++;
    this.boundTools.push((options.tools ?? []).map(toolName));
    const reply = this.#policy(messages, turn);
    const id = `${this.#idPrefix}-ai-${turn}`;
    const message =
      "text" in reply
        ? new AIMessage({ id, content: reply.text })
        : new AIMessage({
            id,
            content: "",
            tool_calls: reply.toolCalls.map((call, i) => ({
              id: `${this.#idPrefix}-call-${turn}-${i}`,
              name: call.name,
              args: call.args,
              type: "tool_call" as const,
            })),
          });
    return { generations: [{ text: message.text, message }] };
  }
}

/**
 * Whether any model turn so far called a tool of this name.
 * @param messages the conversation
 * @param name the model-visible tool name
 * @returns `true` once the model has asked for it
 */
export function hasCalled(messages: readonly BaseMessage[], name: string): boolean {
  return messages.some((m) => AIMessage.isInstance(m) && (m.tool_calls ?? []).some((c) => c.name === name));
}

/**
 * The structured body of the latest successful result of a tool. A governed MCP tool's message
 * carries the model's compact text and, as its `artifact`, the whole outcome: a script reads the
 * outcome (`{invocationId, ...result}`), a real model the text, which says the same ids and labels.
 * The built-ins (`artifact_download`, `paper_extract_pdf`) answer in JSON.
 * @param messages the conversation
 * @param name the model-visible tool name
 * @returns the body, or `undefined` when the tool has not answered successfully
 */
export function lastToolResult<T>(messages: readonly BaseMessage[], name: string): T | undefined {
  for (const message of [...messages].reverse()) {
    if (!ToolMessage.isInstance(message) || message.name !== name || message.status === "error") continue;
    return toolResultBody(message) as T | undefined;
  }
  return undefined;
}

/**
 * The structured body of a tool message: a governed outcome's `{invocationId, ...result}` from its
 * `artifact`, else the JSON of its text (built-ins, `tool_search`, errors).
 * @param message a tool message
 * @returns the body, or `undefined` when the text is not JSON
 */
export function toolResultBody(message: ToolMessage): Record<string, unknown> | undefined {
  const outcome = message.artifact as
    | { invocationId?: unknown; result?: Record<string, unknown> }
    | undefined;
  if (typeof outcome?.invocationId === "string" && outcome.result !== undefined) {
    return { invocationId: outcome.invocationId, ...outcome.result };
  }
  try {
    return JSON.parse(message.text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function toolName(tool: BindToolsInput): string {
  const fn = (tool as { function?: { name: string } }).function;
  return fn?.name ?? (tool as { name?: string }).name ?? "?";
}
