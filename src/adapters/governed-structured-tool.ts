/**
 * A LangChain `StructuredTool` whose schema is a governed tool's JSON Schema and whose execution is
 * handed to a runner (in practice `executeGovernedToolCall`). It exists because LangChain validates
 * JSON-Schema tool input itself and throws an unstructured `ToolInputParsingException`; a governed
 * call must instead reach the broker, which validates, answers `INVALID_INPUT` with the failing
 * field and writes the ledger row.
 */
import type { CallbackManagerForToolRun } from "@langchain/core/callbacks/manager";
import type { ToolMessage } from "@langchain/core/messages";
import { StructuredTool, type ToolRunnableConfig } from "@langchain/core/tools";
import type { JSONSchema } from "@langchain/core/utils/json_schema";
import type { ToolCallLike } from "../nodes/index.js";
import type { SurfaceTool } from "../visibility/index.js";

/** Runs one call of the tool and returns the message for the model (never throws for tool failures). */
export type GovernedToolRunner = (
  call: ToolCallLike,
  config: ToolRunnableConfig | undefined,
) => Promise<ToolMessage>;

/** Fields of `GovernedStructuredTool`. */
export interface GovernedStructuredToolFields {
  name: string;
  description: string;
  /** JSON Schema of the arguments, bound to the model as it is. */
  schema: Record<string, unknown>;
  run: GovernedToolRunner;
}

/**
 * A tool that binds a JSON Schema and delegates execution, input validation included, to `run`.
 * Invoked with a tool call it returns the runner's `ToolMessage`; with plain arguments, the
 * message's content.
 */
export class GovernedStructuredTool extends StructuredTool {
  override name: string;
  override description: string;
  override schema: JSONSchema;
  readonly #run: GovernedToolRunner;

  /** @param fields name, description, schema and the runner */
  constructor(fields: GovernedStructuredToolFields) {
    super();
    this.name = fields.name;
    this.description = fields.description;
    this.schema = fields.schema as JSONSchema;
    this.#run = fields.run;
  }

  /**
   * Runs the call through the runner, skipping LangChain's own schema check (the broker's is the
   * one that counts, and it is audited).
   * @param input a tool call `{type: "tool_call", id, name, args}` or the plain arguments
   * @param config the runnable config (thread id, abort signal)
   * @returns the `ToolMessage` for a tool call, else its content
   */
  // biome-ignore lint/suspicious/noExplicitAny: the base signature's return type is a conditional over its generics
  override async invoke(input: unknown, config?: ToolRunnableConfig): Promise<any> {
    const isCall = isToolCall(input);
    const call: ToolCallLike = isCall
      ? { id: input.id, name: this.name, args: input.args }
      : { name: this.name, args: (input ?? {}) as Record<string, unknown> };
    if (call.id === undefined && config?.toolCall?.id !== undefined) call.id = config.toolCall.id;
    const message = await this.#run(call, config);
    return isCall ? message : message.content;
  }

  protected override async _call(
    args: Record<string, unknown>,
    _runManager?: CallbackManagerForToolRun,
    config?: ToolRunnableConfig,
  ): Promise<unknown> {
    return (await this.#run({ name: this.name, args }, config)).content;
  }
}

/**
 * Wraps a surface tool as a governed StructuredTool.
 * @param tool the surface tool (its model-visible name, composed description and input schema)
 * @param run the runner that executes a call
 * @returns the tool, bindable to any chat model
 */
export function toGovernedStructuredTool(tool: SurfaceTool, run: GovernedToolRunner): GovernedStructuredTool {
  return new GovernedStructuredTool({
    name: tool.name,
    description: tool.description,
    schema: tool.inputSchema,
    run,
  });
}

interface ToolCallInput {
  type: "tool_call";
  id?: string | undefined;
  args: Record<string, unknown>;
}

function isToolCall(input: unknown): input is ToolCallInput {
  return (
    typeof input === "object" &&
    input !== null &&
    "type" in input &&
    input.type === "tool_call" &&
    "args" in input &&
    typeof input.args === "object"
  );
}
