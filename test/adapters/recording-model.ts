/** A `fakeModel()` that also records the tools bound for each model call (what the model "saw"). */

import { FakeBuiltModel } from "@langchain/core/testing";
import type { StructuredTool } from "@langchain/core/tools";

/** One `bindTools` call: the tool names and their schemas as bound. */
export interface BoundTools {
  names: string[];
  schemas: Record<string, unknown>;
}

/** Scripted fake chat model that records each tool binding. */
export class RecordingModel extends FakeBuiltModel {
  readonly bound: BoundTools[] = [];

  // biome-ignore lint/suspicious/noExplicitAny: mirrors the base signature's tool union
  override bindTools(tools: any[]) {
    const entries = (tools as StructuredTool[]).map((t) => [t.name, t.schema] as const);
    this.bound.push({ names: entries.map(([name]) => name), schemas: Object.fromEntries(entries) });
    return super.bindTools(tools);
  }
}
