/**
 * What the approval examples share: the bundled science sources against the offline fake providers,
 * a policy that makes PubMed searches dangerous (say, because queries may name patients), a scripted
 * model that searches PubMed twice and UniProt once in one turn, and the loop that answers the cards.
 * Each example answers the first PubMed card "allow once" and the second "deny"; UniProt is safe.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { INTERRUPT, type Interrupt, isInterrupted } from "@langchain/langgraph";
import type { HITLRequest, HITLResponse } from "langchain";
import { type ApprovalHitlRequest, createGovernance, type Governance } from "sciencegate";
import { startOfflineProviders } from "../offline/providers.js";

/** A governance runtime over the offline providers; `close()` stops both. */
export async function offlineGovernance(): Promise<{ governance: Governance; close: () => Promise<void> }> {
  const providers = await startOfflineProviders();
  const governance = await createGovernance({
    env: { ...process.env, ...providers.env },
    storage: { dataDir: mkdtempSync(join(tmpdir(), "sciencegate-approval-example-")) },
    permissions: { policy: { isDangerous: (call) => (call.sourceId === "pubmed" ? true : undefined) } },
  });
  return {
    governance,
    close: async () => {
      await governance.close();
      await providers.server.close();
    },
  };
}

/** The scripted model: select the tools, call three at once, then answer. Ids are explicit. */
export function scriptedModel(idPrefix = "model") {
  return fakeModel()
    .respond(
      new AIMessage({
        id: `${idPrefix}-select`,
        content: "",
        tool_calls: [
          {
            id: "select",
            name: "tool_search",
            args: { query: "select:mcp__pubmed__search,mcp__uniprot__search" },
          },
        ],
      }),
    )
    .respond(
      new AIMessage({
        id: `${idPrefix}-calls`,
        content: "",
        tool_calls: [
          { id: "pubmed-1", name: "mcp__pubmed__search", args: { query: "BRAF V600E melanoma" } },
          { id: "pubmed-2", name: "mcp__pubmed__search", args: { query: "BRAF inhibitor resistance" } },
          { id: "uniprot-1", name: "mcp__uniprot__search", args: { query: "BRAF human" } },
        ],
      }),
    )
    .respond(
      new AIMessage({ id: `${idPrefix}-answer`, content: "Here is what the approved searches found." }),
    );
}

/** How a card looks to the loop: its summary and the tool call id it is about. */
export interface CardView {
  summary: string;
  toolCallId: string | undefined;
}

/**
 * Runs a thread to its end, answering every card of every pause in one resume (a map keyed by
 * interrupt id): the call `pubmed-1` is allowed once, every other card is denied with a message.
 * @param invoke starts (`undefined`) or resumes (`new Command({resume})`) the thread; returns its state
 * @param view reads a card's summary and tool call id from its interrupt value
 * @param answer builds the resume value of one card
 * @returns the final state
 */
export async function answerCards<S extends object>(
  invoke: (resume: Record<string, unknown> | undefined) => Promise<S>,
  view: (value: unknown) => CardView,
  answer: (allow: boolean) => unknown,
): Promise<S> {
  let state = await invoke(undefined);
  while (isInterrupted(state)) {
    const cards = state[INTERRUPT] as Interrupt[];
    console.log(`${cards.length} approval card(s) waiting`);
    const resume: Record<string, unknown> = {};
    for (const card of cards) {
      if (card.id === undefined) continue;
      const { summary, toolCallId } = view(card.value);
      const allow = toolCallId === "pubmed-1";
      console.log(`- ${summary} -> ${allow ? "allow once" : "deny"}`);
      resume[card.id] = answer(allow);
    }
    state = await invoke(resume);
  }
  return state;
}

/** The user's question every example starts its thread with. */
export const QUESTION = "What is known about BRAF V600E?";

/**
 * How the loop reads a card: langchain's `HITLRequest` of one call (what Agent Chat UI and LangGraph
 * Studio render), whose first description line is the card's summary; Sciencegate's own card rides
 * along under `sciencegate`.
 */
export const hitlCard = (value: unknown): CardView => {
  const request: HITLRequest = value as ApprovalHitlRequest;
  return {
    summary: request.actionRequests[0]?.description?.split("\n")[0] ?? "",
    toolCallId: (value as ApprovalHitlRequest).sciencegate.toolCallId,
  };
};

/** The answer to a card, as langchain's `HITLResponse`: approve this call once, or reject it with a message for the model. */
export const hitlAnswer = (allow: boolean): HITLResponse =>
  allow
    ? { decisions: [{ type: "approve" }] }
    : { decisions: [{ type: "reject", message: "not this search" }] };

/** Prints what the ledger recorded for the session: one line per invocation. */
export async function printLedger(governance: Governance, sessionId: string): Promise<void> {
  for (const row of await governance.ledger.query({ sessionId })) {
    console.log(
      `ledger: ${row.toolCallId} ${row.sourceId}/${row.toolId} ${row.status}${row.error ? ` ${row.error.code}` : ""}`,
    );
  }
}
