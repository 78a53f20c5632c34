/**
 * A scripted chat model that subclasses the real `BaseChatModel` and records, for every turn, the
 * messages it was sent and the tools bound to it (as a provider would receive them).
 */
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BindToolsInput,
} from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";

/** One scripted reply: a message, or a function of the messages the model was sent. */
export type Reply = AIMessage | ((messages: BaseMessage[]) => AIMessage | Promise<AIMessage>);

/** A tool as bound for one turn. */
export interface BoundTool {
  name: string;
  /** The JSON schema of the tool's arguments, as the provider receives it. */
  parameters?: Record<string, unknown>;
}

/** What the model saw in one turn. */
export interface RecordedTurn {
  messages: BaseMessage[];
  tools: BoundTool[];
  /** The system message text ("" without one). */
  system: string;
}

interface RecordingCallOptions extends BaseChatModelCallOptions {
  tools?: BindToolsInput[];
}

let replyCounter = 0;

/**
 * An AI message with tool calls and a unique id (ids must differ across models sharing a graph).
 * @param calls name and args of each call; ids default to `<name>-<n>`
 */
export function callTools(...calls: Array<{ name: string; args: Record<string, unknown>; id?: string }>) {
  replyCounter += 1;
  return new AIMessage({
    id: `ai-${replyCounter}`,
    content: "",
    tool_calls: calls.map((call, i) => ({
      id: call.id ?? `${call.name}-${replyCounter}-${i}`,
      name: call.name,
      args: call.args,
      type: "tool_call" as const,
    })),
  });
}

/** A final answer with a unique id. */
export function answer(text: string): AIMessage {
  replyCounter += 1;
  return new AIMessage({ id: `ai-${replyCounter}`, content: text });
}

/** The scripted model; replies are consumed in order, one per turn. */
export class RecordingChatModel extends BaseChatModel<RecordingCallOptions> {
  readonly turns: RecordedTurn[] = [];
  readonly #replies: Reply[];

  constructor(replies: Reply[]) {
    super({});
    this.#replies = [...replies];
  }

  _llmType(): string {
    return "recording";
  }

  override bindTools(tools: BindToolsInput[]) {
    return this.withConfig({ tools });
  }

  /** Names bound in a turn. */
  toolNames(turn: number): string[] {
    return (this.turns[turn]?.tools ?? []).map((tool) => tool.name);
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const system = messages[0]?.type === "system" ? messages[0].text : "";
    this.turns.push({ messages, tools: (options.tools ?? []).map(describeTool), system });
    const reply = this.#replies.shift();
    if (reply === undefined) throw new Error(`RecordingChatModel: no reply for turn ${this.turns.length}`);
    const message = typeof reply === "function" ? await reply(messages) : reply;
    return { generations: [{ text: message.text, message }] };
  }
}

/** A bound tool as a provider receives it: LangChain's own conversion to the function format. */
function describeTool(tool: BindToolsInput): BoundTool {
  const { function: fn } = convertToOpenAITool(tool);
  return fn.parameters ? { name: fn.name, parameters: fn.parameters } : { name: fn.name };
}
