/**
 * The approval card in a terminal: prints what a dangerous call would do and reads the answer
 * (Allow once / Allow matching / Deny / Always allow) with `node:readline`.
 */

import type { PermissionCard } from "../governance/permissions/index.js";
import { askLine } from "./ask-line.js";
import { terminalLine } from "./terminal-text.js";

/** What a human (or `--approve`) can answer: the four card decisions (`always` is `allow_always`). */
export const APPROVE_CHOICES = ["once", "matching", "deny", "always"] as const;

/** One of {@link APPROVE_CHOICES}. */
export type ApproveChoice = (typeof APPROVE_CHOICES)[number];

/** Where the prompt reads and writes; tests pass a `Readable` and a collector. */
export interface TerminalApprovalIo {
  input: NodeJS.ReadableStream;
  /** Receives the card and the prompt (the CLI writes them to stderr, keeping stdout for results). */
  write: (text: string) => void;
}

const MENU: ReadonlyArray<[ApproveChoice, string, string]> = [
  ["once", "1", "Allow once"],
  ["matching", "2", "Allow matching (this session)"],
  ["deny", "3", "Deny"],
  ["always", "4", "Always allow (this session)"],
];

/** What Enter alone answers: the narrowest allow, covering this one call and nothing after it. */
const DEFAULT_CHOICE: ApproveChoice = "once";

/**
 * Parses an answer: the menu number, the choice name, or its first letter; an empty line is the
 * default, `once`.
 * @param text what the human typed
 * @returns the choice, or `undefined` for anything else
 */
export function parseApproveChoice(text: string): ApproveChoice | undefined {
  const typed = text.trim().toLowerCase();
  if (typed === "") return DEFAULT_CHOICE;
  const found = MENU.find(([choice, key]) => typed === key || typed === choice || choice.startsWith(typed));
  return found?.[0];
}

/**
 * Shows the card and asks until the answer is valid. End of input counts as `deny`: nothing runs
 * unless a human said so.
 * @param card the call's approval card
 * @param io input stream and output writer
 * @returns the choice
 */
export function askInTerminal(card: PermissionCard, io: TerminalApprovalIo): Promise<ApproveChoice> {
  // The card quotes the call's arguments and the server's tool: each field inert, so that no argument
  // can redraw the prompt or forge the line a human decides by.
  io.write(
    terminalLine`Permission needed: ${card.summary}\n` +
      terminalLine`  ${card.action} on ${card.resource} (risk ${card.risk}, source ${card.sourceId}, tool ${card.toolId})\n` +
      terminalLine`  Allow matching covers ${card.matchingScope.description}.\n` +
      `  ${MENU.map(([, key, label]) => `[${key}] ${label}`).join("  ")}\n`,
  );
  const answer = askLine(io.input, parseApproveChoice, {
    retry: () => io.write("Answer 1-4 (once, matching, deny, always; Enter = once): "),
    onEnd: "deny" as ApproveChoice,
  });
  io.write("Choice [1-4, Enter = 1 Allow once]: ");
  return answer;
}
