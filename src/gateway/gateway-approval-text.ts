/**
 * What the gateway's approval path shows an MCP client: the elicitation form of a card (its text and
 * a form of the decisions), the validation of the form's answer, and the `PERMISSION_DENIED` of a
 * client that cannot be asked, with the commands that approve the call out of band.
 */
import type { ElicitRequestFormParams } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type {
  PermissionCard,
  PermissionDecision,
  PermissionDecisionKind,
} from "../governance/permissions/index.js";
import type { ApprovalHookResult } from "../nodes/index.js";

/**
 * How a person approves a call without elicitation: the `sciencegate grants` commands. The client is
 * told their short form (no path of the gateway's machine); the complete commands, built to reach this
 * gateway's stores and catalog, go to the operator through `report`.
 */
export interface OutOfBandApproval {
  /**
   * What every complete command starts with, up to and including the program, e.g.
   * `SCIENCEGATE_HOME=/srv/sciencegate sciencegate`. @default `sciencegate`
   */
  cli?: string | undefined;
  /**
   * The arguments that give the complete `grants add` the gateway's catalog, already shell-quoted, e.g.
   * `["--config", "/srv/extensions_config.json"]`. @default none
   */
  catalogArgs?: readonly string[] | undefined;
  /**
   * Receives, for the operator, a line with the complete commands each time a client is refused.
   * @default stderr
   */
  report?: ((line: string) => void) | undefined;
  /**
   * Whether `sciencegate grants mode` reaches the running gateway: only when its session state is
   * shared through PostgreSQL (`SCIENCEGATE_DATABASE_URL`); otherwise approval modes live in the
   * gateway's memory and the refusal names only the grant. @default false
   */
  modesShared?: boolean | undefined;
}

/** The form's labels of the decisions, and what each does. */
const DECISIONS: Record<PermissionDecisionKind, { title: string; effect: (card: PermissionCard) => string }> =
  {
    allow_once: { title: "Allow once", effect: () => "this call only" },
    allow_matching: {
      title: "Allow matching",
      effect: (card) => `this call, and ${card.matchingScope.description}`,
    },
    allow_always: {
      title: "Allow always",
      effect: () => "this call, and every later call of this session without asking",
    },
    deny: { title: "Deny", effect: () => "refuse this call; your message is shown to the model" },
  };

/** As long as a denial's message may be (`permissionDecisionSchema`). */
const MAX_MESSAGE_CHARS = 2_000;

const formAnswerSchema = z.object({
  decision: z.string(),
  message: z.string().max(MAX_MESSAGE_CHARS).optional(),
});

/**
 * The `elicitation/create` parameters of a card: its text (summary, tool, action, resource, risk, and
 * what each decision does, "allow matching" in the card's own words) and a form with one enum field,
 * `decision`, and an optional `message` for a denial.
 * @param card the call's card
 * @param name the model-visible tool name
 * @param invalid why the previous answer was refused, when asking again
 * @returns the form request's parameters
 */
export function approvalForm(
  card: PermissionCard,
  name: string,
  invalid: string | undefined,
): ElicitRequestFormParams {
  const lines = [
    ...(invalid === undefined ? [] : [invalid, ""]),
    "Approve this tool call?",
    card.summary,
    `Tool ${name} · action ${card.action} · resource ${card.resource} · risk ${card.risk}`,
    ...card.allowedDecisions.map((d) => `${DECISIONS[d].title}: ${DECISIONS[d].effect(card)}.`),
  ];
  return {
    message: lines.join("\n"),
    requestedSchema: {
      type: "object",
      properties: {
        decision: {
          type: "string",
          title: "Decision",
          enum: [...card.allowedDecisions],
          enumNames: card.allowedDecisions.map((d) => DECISIONS[d].title),
        },
        message: {
          type: "string",
          title: "Message to the model",
          description: "Optional, with Deny: why, or what to do instead.",
          maxLength: MAX_MESSAGE_CHARS,
        },
      },
      required: ["decision"],
    },
  };
}

/**
 * Validates the content of an accepted form.
 * @param content the answer's `content`
 * @param card the card asked about (its `allowedDecisions`)
 * @returns the decision (a message is kept with a denial only), or why the answer is refused
 */
export function parseApprovalForm(
  content: Record<string, unknown> | undefined,
  card: PermissionCard,
): { success: true; decision: PermissionDecision } | { success: false; error: string } {
  const offered = card.allowedDecisions.join(" | ");
  const refuse = (issue: string) => ({
    success: false as const,
    error: `Invalid answer (${issue}). Choose a decision: ${offered}.`,
  });
  if (content === undefined) return refuse("accepted without the form's content");
  const parsed = formAnswerSchema.safeParse(content);
  if (!parsed.success) {
    return refuse(
      parsed.error.issues.map((i) => `${i.path.join(".") || "(value)"}: ${i.message}`).join("; "),
    );
  }
  const kind = card.allowedDecisions.find((d) => d === parsed.data.decision);
  if (kind === undefined) return refuse(`decision: '${parsed.data.decision}' is not offered`);
  const message = parsed.data.message?.trim();
  return {
    success: true,
    decision: kind === "deny" && message ? { decision: kind, message } : { decision: kind },
  };
}

/** The commands that approve a call out of band: the grant, and the mode when it reaches the gateway. */
export interface OutOfBandCommands {
  grant: string;
  mode?: string | undefined;
}

/**
 * The `sciencegate grants` commands that approve a call of a session.
 * @param card the call's card
 * @param name the model-visible tool name
 * @param sessionId the governance session
 * @param outOfBand the commands' start, catalog arguments and whether modes are shared
 * @param complete with the operator's start and catalog arguments (paths of the gateway's machine);
 *   otherwise the short form a client may be shown
 * @returns the commands
 */
export function outOfBandCommands(
  card: PermissionCard,
  name: string,
  sessionId: string,
  outOfBand: OutOfBandApproval,
  complete: boolean,
): OutOfBandCommands {
  const cli = complete ? (outOfBand.cli ?? "sciencegate") : "sciencegate";
  const session = ["--session", shellQuote(sessionId)];
  const grant = [
    cli,
    "grants add",
    ...session,
    "--tool",
    shellQuote(name),
    "--resource",
    shellQuote(card.matchingScope.resource),
    ...(complete ? (outOfBand.catalogArgs ?? []) : []),
  ].join(" ");
  const mode = outOfBand.modesShared ? [cli, "grants mode", ...session, "always_allow"].join(" ") : undefined;
  return { grant, mode };
}

/**
 * The denial of a dangerous call whose client cannot be asked (no elicitation capability): the
 * message says how to approve it and `data` carries the card and the short commands (`approve.grant`,
 * and `approve.mode` when modes reach the running gateway), which the gateway's operator runs with
 * the gateway's data directory and catalog; no path of the gateway's machine is told to the client.
 * @param card the call's card
 * @param name the model-visible tool name
 * @param sessionId the governance session
 * @param outOfBand the commands' settings; without it, the embedding app approves
 * @returns the hook's denial
 */
export function outOfBandRefusal(
  card: PermissionCard,
  name: string,
  sessionId: string,
  outOfBand: OutOfBandApproval | undefined,
): ApprovalHookResult {
  const head =
    `approval required: ${card.summary} (${card.action} on ${card.resource}, risk ${card.risk}). ` +
    "This MCP client did not declare the elicitation capability, so the gateway cannot ask its user";
  if (outOfBand === undefined) {
    return {
      allowed: false,
      reason:
        `${head}. The app that runs the gateway can grant it (governance.permissions.grant) or set the session's ` +
        "approval mode to always_allow (governance.permissions.setApprovalMode); or connect with a client that supports elicitation",
      data: { approvalRequired: true, card },
    };
  }
  const { grant, mode } = outOfBandCommands(card, name, sessionId, outOfBand, false);
  const orMode =
    mode === undefined
      ? ""
      : `, or \`${mode}\` (every call of this session then runs without asking; \`ask_for_dangerous\` undoes it)`;
  return {
    allowed: false,
    reason:
      `${head}. To approve it out of band, the gateway's operator runs \`${grant}\` with the gateway's data directory and catalog (the gateway's log shows the complete command; it allows ${card.matchingScope.description})` +
      `${orMode}; then call ${name} again`,
    data: { approvalRequired: true, card, approve: { grant, ...(mode === undefined ? {} : { mode }) } },
  };
}

/**
 * A word as a POSIX shell reads it back: as it is when it holds only safe characters, else in single quotes.
 * @param word the word
 * @returns the quoted word
 */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'"'"'`)}'`;
}
