/**
 * The two shapes of an approval card and of its answer. `native` is Sciencegate's own
 * `PermissionCard`, answered with `{decision, message?}`. `hitl` is langchain's human-in-the-loop
 * protocol (`HITLRequest` / `HITLResponse`, rendered by Agent Chat UI and LangGraph Studio): one action
 * request and one review config per card, the native card under `sciencegate`, answered with
 * `{decisions: [approve | edit | reject]}`. The gate accepts both answers whatever the card's shape.
 * langchain is an optional peer, so its types are mirrored here (the tests check assignability).
 */
import { z } from "zod";
import {
  PERMISSION_DECISIONS,
  type PermissionCard,
  type PermissionDecision,
  permissionDecisionSchema,
} from "../governance/permissions/index.js";

/** How the approval gate raises a card: Sciencegate's own card, or langchain's `HITLRequest`. */
export type ApprovalCardFormat = "native" | "hitl";

/** A decision of langchain's human-in-the-loop protocol. */
export type HitlDecisionType = "approve" | "edit" | "reject";

/**
 * The session scope an `approve` may carry (`{type: "approve", scope}`), mapped to the native
 * decision `allow_<scope>`; absent means `once`.
 */
export const HITL_APPROVE_SCOPES = ["once", "matching", "always"] as const;

/** The native card of a call, plus why the last answer was refused. */
export type ApprovalInterruptValue = PermissionCard & {
  /** Set when the card is asked again because the previous resume value was malformed. */
  invalidResponse?: string;
};

/** The call a card is about, as the model made it (langchain's `ActionRequest`). */
export interface HitlActionRequest {
  /** The model-visible tool name. */
  name: string;
  args: Record<string, unknown>;
  /** The card's summary and what each decision does. */
  description?: string;
}

/** Which decisions a card accepts (langchain's `ReviewConfig`). */
export interface HitlReviewConfig {
  actionName: string;
  allowedDecisions: HitlDecisionType[];
  /** The tool's input schema, when edits are allowed. */
  argsSchema?: Record<string, unknown>;
}

/** A card in the `hitl` format: a langchain `HITLRequest` of one call, plus the native card. */
export interface ApprovalHitlRequest {
  actionRequests: [HitlActionRequest];
  reviewConfigs: [HitlReviewConfig];
  /** The full native card (ignored by clients built for langchain's protocol). */
  sciencegate: ApprovalInterruptValue;
}

/**
 * One answer of langchain's protocol, with Sciencegate's `scope` on `approve` (absent: `once`;
 * `matching` also grants every matching call of the session). Assignable to langchain's `Decision`.
 */
export type HitlDecision =
  | { type: "approve"; scope?: (typeof HITL_APPROVE_SCOPES)[number] }
  | { type: "edit"; editedAction: { name: string; args: Record<string, unknown> } }
  | { type: "reject"; message?: string };

/** The answer to an `hitl` card: langchain's `HITLResponse` with one decision. */
export interface ApprovalHitlResponse {
  decisions: [HitlDecision];
}

/** What the gate knows of the call behind a card, beyond its `AuthorizationRequest`. */
export interface ApprovalAction {
  /** The model-visible tool name (an edit must keep it). */
  name: string;
  /** The arguments as the model gave them. @default the card's (validated) arguments */
  args?: Record<string, unknown>;
  /** The tool's input schema, offered to clients that edit the arguments. */
  argsSchema?: Record<string, unknown>;
  /** Whether an `edit` answer is accepted. @default false */
  editable?: boolean;
}

/** A validated answer: the native decision, and the edited arguments of an `edit`. */
export interface ApprovalAnswer {
  decision: PermissionDecision;
  editedArgs?: Record<string, unknown>;
}

const hitlDecisionSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("approve"), scope: z.enum(HITL_APPROVE_SCOPES).optional() }),
  z.object({ type: z.literal("reject"), message: z.string().max(2_000).optional() }),
  z.object({
    type: z.literal("edit"),
    editedAction: z.object({ name: z.string(), args: z.record(z.string(), z.unknown()) }),
  }),
]);
/** Parsed loosely: `scope` is checked against the native decisions, so new ones work when added. */
const hitlResponseSchema = z.object({
  decisions: z
    .array(
      z.discriminatedUnion("type", [
        z.object({ type: z.literal("approve"), scope: z.string().optional() }),
        ...hitlDecisionSchema.options.slice(1),
      ]),
    )
    .length(1, "answer exactly one decision per card"),
});

/** The JSON Schema of a resume value (native or `hitl`), surfaced as the interrupt's `response_schema`. */
export const approvalResponseJsonSchema = z.toJSONSchema(
  z.union([permissionDecisionSchema, z.object({ decisions: z.array(hitlDecisionSchema).length(1) })]),
) as Record<string, unknown>;

/**
 * Builds the interrupt value of a card.
 * @param card the native card (with `invalidResponse` when asked again)
 * @param format the card's shape
 * @param action the call as the model made it; without it, the card's own arguments and no edits
 * @returns the native card, or a one-call `HITLRequest` carrying it under `sciencegate`
 */
export function approvalInterruptValue(
  card: ApprovalInterruptValue,
  format: ApprovalCardFormat,
  action: ApprovalAction | undefined,
): ApprovalInterruptValue | ApprovalHitlRequest {
  if (format === "native") return card;
  const name = action?.name ?? card.toolId;
  const editable = action?.editable === true;
  const scopes = [
    card.allowedDecisions.includes("allow_matching")
      ? `scope: "matching" also allows ${card.matchingScope.description}`
      : undefined,
    card.allowedDecisions.includes("allow_always")
      ? 'scope: "always" allows every call of this session without asking'
      : undefined,
  ].filter((scope) => scope !== undefined);
  const scopeText = scopes.length === 0 ? "" : ` (${scopes.join("; ")})`;
  const description = [
    card.invalidResponse,
    `${card.summary} [risk: ${card.risk}; resource: ${card.resource}]`,
    `Approve runs this call once${scopeText}.${editable ? " Edit runs it with your arguments instead." : ""} ` +
      "Reject refuses it; your message is shown to the model.",
  ]
    .filter((line) => line !== undefined)
    .join("\n");
  const argsSchema = editable ? action?.argsSchema : undefined;
  return {
    actionRequests: [{ name, args: action?.args ?? card.args, description }],
    reviewConfigs: [
      {
        actionName: name,
        allowedDecisions: editable ? ["approve", "edit", "reject"] : ["approve", "reject"],
        ...(argsSchema === undefined ? {} : { argsSchema }),
      },
    ],
    sciencegate: card,
  };
}

/**
 * Validates a resume value in either shape: native `{decision, message?}`, or an `HITLResponse` with
 * exactly one decision (`approve` with an optional `scope`, `reject` with an optional `message`, or
 * `edit` keeping the tool name, when the card allows edits).
 * @param answer the resume value
 * @param action the call (its name, and whether it may be edited)
 * @returns the answer, or why it is refused (the card then asks again)
 */
export function parseApprovalAnswer(
  answer: unknown,
  action: ApprovalAction | undefined,
): { success: true; answer: ApprovalAnswer } | { success: false; error: string } {
  const isHitl = typeof answer === "object" && answer !== null && "decisions" in answer;
  if (!isHitl) {
    const parsed = permissionDecisionSchema.safeParse(answer);
    return parsed.success ? { success: true, answer: { decision: parsed.data } } : invalid(parsed.error);
  }
  const parsed = hitlResponseSchema.safeParse(answer);
  if (!parsed.success) return invalid(parsed.error);
  const choice = parsed.data.decisions[0] as z.output<typeof hitlResponseSchema>["decisions"][number];
  if (choice.type === "edit") {
    if (action?.editable !== true) return invalidText("decisions.0.type: this card does not accept edits");
    if (choice.editedAction.name !== action.name) {
      return invalidText(
        `decisions.0.editedAction.name: an edit must keep the tool '${action.name}' (got '${choice.editedAction.name}')`,
      );
    }
    return {
      success: true,
      answer: { decision: { decision: "allow_once" }, editedArgs: choice.editedAction.args },
    };
  }
  const native =
    choice.type === "reject"
      ? { decision: "deny", ...(choice.message === undefined ? {} : { message: choice.message }) }
      : { decision: `allow_${choice.scope ?? "once"}` };
  const decision = permissionDecisionSchema.safeParse(native);
  if (decision.success) return { success: true, answer: { decision: decision.data } };
  if (choice.type === "reject") return invalid(decision.error);
  const offered = PERMISSION_DECISIONS.filter((d) => d.startsWith("allow_")).map((d) => d.slice(6));
  const scope = choice.type === "approve" ? choice.scope : undefined;
  return invalidText(`decisions.0.scope: '${scope}' is not offered (${offered.join(" | ")})`);
}

function invalid(error: z.ZodError): { success: false; error: string } {
  return invalidText(error.issues.map((i) => `${i.path.join(".") || "(value)"}: ${i.message}`).join("; "));
}

function invalidText(issues: string): { success: false; error: string } {
  return {
    success: false,
    error:
      `Invalid answer (${issues}). Resume with {decision: ${PERMISSION_DECISIONS.join(" | ")}, message?: string} ` +
      `or {decisions: [{type: "approve", scope?: ${HITL_APPROVE_SCOPES.join(" | ")}} | {type: "reject", message?: string} | {type: "edit", editedAction: {name, args}}]}.`,
  };
}
