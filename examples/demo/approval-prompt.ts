/**
 * Answers every approval card of a paused thread: in a terminal the user chooses per card (a = allow
 * once, m = allow matching, always = always allow, d = deny; Enter means a, the narrowest); otherwise the
 * script's answer is shown and given.
 */

import { createInterface } from "node:readline";
import type { Interrupt } from "@langchain/langgraph";
import type { ApprovalHitlRequest, PermissionCard, PermissionDecision } from "sciencegate";

/** The four answers a card takes. */
type PermissionDecisionKind = PermissionDecision["decision"];
const PERMISSION_DECISIONS: readonly PermissionDecisionKind[] = [
  "allow_once",
  "allow_matching",
  "allow_always",
  "deny",
];

/** Options of {@link answerCards}. */
export interface AnswerCardsOptions {
  /** Ask a human (stdin is a TTY) or give {@link scripted}. */
  interactive: boolean;
  /** Where answers are read in interactive mode. @default process.stdin */
  input?: NodeJS.ReadableStream;
  /** Where cards and prompts are printed. */
  write: (line: string) => void;
  /** The non-interactive answer. @default "allow_matching" */
  scripted?: PermissionDecisionKind;
}

const KEYS = new Map<string, PermissionDecisionKind>([
  ["a", "allow_once"],
  ["m", "allow_matching"],
  ["always", "allow_always"],
  ["d", "deny"],
  ...PERMISSION_DECISIONS.map((decision) => [decision, decision] as const),
]);

/**
 * Reads one typed answer.
 * @param text the line the user typed: a, m, always, d, a decision name, or nothing (`allow_once`)
 * @returns the decision, or `undefined` for anything else
 */
export function parseCardAnswer(text: string): PermissionDecisionKind | undefined {
  const typed = text.trim().toLowerCase();
  // Enter alone allows this one call only: a session-wide allow needs a deliberate "m".
  return typed === "" ? "allow_once" : KEYS.get(typed);
}

/** An approval card as raised: langchain's `HITLRequest` (the default, the card under `sciencegate`) or the card itself. */
export type CardInterrupt = Interrupt<ApprovalHitlRequest | PermissionCard> & { id: string };

/**
 * The permission card an interrupt carries, whatever shape it was raised in.
 * @param value an interrupt's value
 * @returns the card, or `undefined` when the interrupt is no approval card
 */
export function permissionCardOf(value: unknown): PermissionCard | undefined {
  const card = (value as Partial<ApprovalHitlRequest> | undefined)?.sciencegate ?? value;
  const candidate = card as Partial<PermissionCard> | undefined;
  return candidate?.type === "permission" && typeof candidate.summary === "string"
    ? (candidate as PermissionCard)
    : undefined;
}

/**
 * Whether an interrupt carries a permission card.
 * @param item one entry of `__interrupt__`
 * @returns `true` for an approval card
 */
export function isCardInterrupt(item: Interrupt): item is CardInterrupt {
  return typeof item.id === "string" && permissionCardOf(item.value) !== undefined;
}

/**
 * Answers every card; the result resumes the thread with `new Command({resume})`.
 * @param cards the card interrupts of one pause
 * @param options interactive or scripted, input and output
 * @returns `{[interruptId]: decision}` for every card
 */
export async function answerCards(
  cards: ReadonlyArray<CardInterrupt>,
  options: AnswerCardsOptions,
): Promise<Record<string, PermissionDecision>> {
  const answers: Record<string, PermissionDecision> = {};
  for (const card of cards) {
    // The native card offers all four decisions; a native answer resumes an HITL card as well.
    const value = permissionCardOf(card.value) as PermissionCard;
    options.write(
      `  approval card: ${value.summary} (${value.resource}, source ${value.sourceId}, risk ${value.risk})`,
    );
    options.write(`    asked because ${askedBecause(value)}`);
    if (value.matchingScope) options.write(`    allow matching covers ${value.matchingScope.description}`);
    let decision: PermissionDecisionKind;
    if (options.interactive) {
      decision = await ask(options.input ?? process.stdin, options.write);
      options.write(`    → ${decision}`);
    } else {
      decision = options.scripted ?? "allow_matching";
      options.write(`    → ${decision} (the script's answer; run in a terminal to choose)`);
    }
    answers[card.id] = { decision };
  }
  return answers;
}

/**
 * Why a card appears, from its risk: Sciencegate's default rule asks for downloads, writes and data
 * that is not public, so a card about a public read can only come from the app's own policy.
 * @param card the card
 * @returns the reason in words
 */
export function askedBecause(card: PermissionCard): string {
  switch (card.risk) {
    case "download":
      return "downloads always need approval (Sciencegate's default rule)";
    case "write":
      return "the tool is not declared read-only, so it may change something (Sciencegate's default rule)";
    case "private-data":
      return "the source's data is not public (Sciencegate's default rule)";
    default:
      return (
        "the app's own permission policy says so: this demo's permissionPolicy.isDangerous marks every " +
        `${card.sourceId} call dangerous (a read-only call of a public source needs no approval by default)`
      );
  }
}

/** Asks until the answer is valid; end of input counts as deny (nothing runs unless someone said so). */
function ask(input: NodeJS.ReadableStream, write: (line: string) => void): Promise<PermissionDecisionKind> {
  write(
    "    [a] allow once  [m] allow matching  [always] always allow (this session)  [d] deny   (Enter = a)",
  );
  const lines = createInterface({ input, terminal: false });
  return new Promise((resolve) => {
    let answered = false;
    const finish = (decision: PermissionDecisionKind) => {
      if (answered) return;
      answered = true;
      lines.close();
      resolve(decision);
    };
    lines.on("line", (line) => {
      const decision = parseCardAnswer(line);
      if (decision) finish(decision);
      else write("    answer a, m, always or d:");
    });
    lines.on("close", () => finish("deny"));
  });
}
