/**
 * Upstream servers' sampling requests (`sampling/createMessage`) answered with the app's LangChain
 * chat model: the server's messages become LangChain messages, the model's reply its text answer.
 */

import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { CreateMessageRequestParams, CreateMessageResult } from "@modelcontextprotocol/client";
import { GovernanceError } from "../core/index.js";
import type { UpstreamSampler } from "../governance/broker/index.js";

/** A sampling message's content block, as the 2025-11-25 and 2026-07-28 revisions allow it. */
type SamplingBlock = { type: string; text?: string; data?: string; mimeType?: string };

/**
 * Answers sampling requests with a chat model.
 * @param model the app's chat model (its own configuration: maxTokens, temperature, ...)
 * @returns the broker's sampler
 * @throws (from the sampler) GovernanceError `INVALID_INPUT` for a request that asks the model to use
 *   tools or sends content other than text and images
 */
export function modelSampler(model: BaseChatModel): UpstreamSampler {
  return async (params: CreateMessageRequestParams, signal: AbortSignal): Promise<CreateMessageResult> => {
    if ((params as { tools?: unknown }).tools !== undefined) {
      throw new GovernanceError(
        "INVALID_INPUT",
        "The server's sampling request offers the model tools, which Sciencegate does not run for servers.",
      );
    }
    const messages: BaseMessage[] = params.systemPrompt ? [new SystemMessage(params.systemPrompt)] : [];
    for (const message of params.messages) {
      const blocks = (
        Array.isArray(message.content) ? message.content : [message.content]
      ) as SamplingBlock[];
      const content = blocks.map(toLangChainBlock);
      messages.push(
        message.role === "assistant" ? new AIMessage({ content }) : new HumanMessage({ content }),
      );
    }
    const reply = await model.invoke(messages, {
      signal,
      ...(params.stopSequences === undefined ? {} : { stop: params.stopSequences }),
    });
    return {
      model: modelName(model),
      role: "assistant",
      content: { type: "text", text: reply.text },
      stopReason: "endTurn",
    };
  };
}

function toLangChainBlock(
  block: SamplingBlock,
): { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } } {
  if (block.type === "text" && typeof block.text === "string") return { type: "text", text: block.text };
  if (block.type === "image" && typeof block.data === "string" && typeof block.mimeType === "string") {
    return { type: "image_url", image_url: { url: `data:${block.mimeType};base64,${block.data}` } };
  }
  throw new GovernanceError(
    "INVALID_INPUT",
    `The server's sampling request has '${block.type}' content, which Sciencegate passes to the model only as text or an image.`,
  );
}

/** The model's own name where it says one (`model` or `modelName`), else its LangChain class name. */
function modelName(model: BaseChatModel): string {
  const named = model as BaseChatModel & { model?: unknown; modelName?: unknown };
  for (const candidate of [named.model, named.modelName]) {
    if (typeof candidate === "string" && candidate !== "") return candidate;
  }
  return model.getName();
}
