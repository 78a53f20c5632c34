/**
 * Executors over the dual-revision upstream fixture (`test/fixtures/servers/upstream-input-server.ts`),
 * whose tools ask their client for input: a scripted model selects one tool, calls it once, then answers.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";
import type { Interrupt } from "@langchain/langgraph";
import type { ProtocolSetting } from "../../src/config/types.js";
import type { UpstreamInputCard } from "../../src/nodes/upstream-input.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import { stdioUpstream } from "../mcp/upstream-fixture.js";
import { interruptsOf } from "./filesystem-executors.js";
import { RecordingModel } from "./recording-model.js";

/** The model-visible name of one fixture tool. */
export const toolName = (tool: string) => `mcp__up__${tool}`;

/**
 * A runtime over the fixture over stdio, its ledger and CAS in `dataDir`.
 * @param options the revision to speak, the fixture's effects file, the data directory and the app's model
 */
export async function upstreamGovernance(options: {
  protocol: ProtocolSetting;
  effects: string;
  dataDir?: string;
  /** A PostgreSQL URL: the ledger and the shared state there (replicas of one app). */
  postgres?: string;
  samplingModel?: BaseChatModel;
}): Promise<Governance> {
  return createGovernance({
    config: {
      servers: [stdioUpstream("up", { effects: options.effects, config: { protocol: options.protocol } })],
    },
    manifests: { builtin: false, dirs: [] },
    storage: {
      dataDir: options.dataDir ?? (await mkdtemp(join(tmpdir(), "sciencegate-upstream-data-"))),
      ...(options.postgres ? { postgres: options.postgres } : {}),
    },
    ...(options.samplingModel ? { mcp: { sampling: { model: options.samplingModel } } } : {}),
  });
}

/** Selects `tool` with `tool_search`, calls it with `args` (call id `call-1`), then answers "done". */
export function oneCallModel(tool: string, args: Record<string, unknown>, idPrefix = "m"): RecordingModel {
  return new RecordingModel()
    .respond(
      new AIMessage({
        id: `${idPrefix}-1`,
        content: "",
        tool_calls: [{ id: "search-1", name: "tool_search", args: { query: `select:${toolName(tool)}` } }],
      }),
    )
    .respond(
      new AIMessage({
        id: `${idPrefix}-2`,
        content: "",
        tool_calls: [{ id: "call-1", name: toolName(tool), args }],
      }),
    )
    .respond(new AIMessage({ id: `${idPrefix}-3`, content: "done" }));
}

/** One interrupt of a paused run: its id and what it asks, in the native shape (`sciencegate`). */
export interface RaisedCard {
  id: string;
  type: "permission" | "upstream_input";
  value: Record<string, unknown>;
  /** The `hitl` request as raised, when it was one. */
  hitl?: Record<string, unknown> | undefined;
}

/** The cards of a paused run. */
export function raisedCards(state: unknown): RaisedCard[] {
  return (interruptsOf(state) as unknown as Interrupt<Record<string, unknown>>[]).map(({ id, value }) => {
    const raw = value ?? {};
    const native = ("sciencegate" in raw ? raw.sciencegate : raw) as Record<string, unknown>;
    return {
      id: id ?? "",
      type: native.type as RaisedCard["type"],
      value: native,
      hitl: "sciencegate" in raw ? raw : undefined,
    };
  });
}

/** The only card of a paused run, which must be of `type`. */
export function onlyCard(
  state: unknown,
  type: RaisedCard["type"],
): RaisedCard & { question?: UpstreamInputCard } {
  const cards = raisedCards(state);
  if (cards.length !== 1 || cards[0]?.type !== type) {
    throw new Error(`expected one ${type} card, got ${JSON.stringify(cards.map((card) => card.type))}`);
  }
  return cards[0] as RaisedCard;
}
