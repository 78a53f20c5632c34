/**
 * Public types of the permission service: approval modes, the approval card a
 * dangerous call produces, the human's decision (with its zod schema) and the evaluation outcome.
 */
import { z } from "zod";
import type { AuthorizationRequest } from "./authorization.js";

/**
 * How a session treats dangerous calls: `ask_for_dangerous` asks a human for each one without a
 * covering grant; `always_allow` lets every call through (each still leaves an authorization row).
 */
export type ApprovalMode = "ask_for_dangerous" | "always_allow";

/** What a call puts at stake, shown on the card so that a human can judge it quickly. */
export type PermissionRisk = "read" | "write" | "download" | "private-data";

/**
 * The answers a human can give on a card: `allow_once` (this call), `allow_matching` (this call and
 * every later one the card's `matchingScope` covers), `allow_always` (this call, and the session
 * switches to `always_allow`) and `deny`.
 */
export const PERMISSION_DECISIONS = ["allow_once", "allow_matching", "allow_always", "deny"] as const;

/** One of {@link PERMISSION_DECISIONS}. */
export type PermissionDecisionKind = (typeof PERMISSION_DECISIONS)[number];

/**
 * The schema of a human decision. The approval gate passes it as the interrupt's `responseSchema`,
 * so a malformed resume value is rejected before anything is recorded.
 * @example
 * permissionDecisionSchema.parse({ decision: "deny", message: "not this one" });
 */
export const permissionDecisionSchema = z.strictObject({
  decision: z.enum(PERMISSION_DECISIONS),
  /** Shown to the model with a denial (for example why, or what to do instead). */
  message: z.string().max(2_000).optional(),
});

/** A validated human decision. */
export type PermissionDecision = z.output<typeof permissionDecisionSchema>;

/** What recorded an authorization row; the values of `AuthorizationRecord.decisionSource`. */
export type PermissionDecisionSource =
  | "policy_not_dangerous"
  | "existing_grant"
  | "always_allow"
  | "user_once"
  | "user_grant"
  | "user_always"
  | "user_deny";

/** The payload of one approval card (the LangGraph interrupt value of one dangerous call). */
export interface PermissionCard {
  type: "permission";
  /** Stable for one call (same session, thread, tool call and arguments), so a re-run shows the same card. */
  requestId: string;
  /** The manifest's permission action, e.g. `pubmed:search`. */
  action: string;
  /** The rendered resource, e.g. `artifact:arxiv:2401.00001v1:papers/a.pdf`. */
  resource: string;
  /** What will actually happen, with the real arguments, e.g. `Search PubMed for "brca1"`. */
  summary: string;
  /** What `allow_matching` would allow for the rest of the session. */
  matchingScope: {
    /** The grant key, e.g. `filesystem:write_file:dir:/tmp/x` or `pubmed:search`. */
    resource: string;
    /** In words, e.g. `every filesystem:write_file call with path in /tmp/x (not in its subfolders), for the rest of this session`. */
    description: string;
  };
  sourceId: string;
  toolId: string;
  /** Absent when the broker call carried no tool call id. */
  toolCallId?: string;
  /** The validated arguments of the call. */
  args: Record<string, unknown>;
  risk: PermissionRisk;
  allowedDecisions: PermissionDecisionKind[];
}

/** The answer of `PermissionService.evaluate`: let the call through, or show a card. */
export type PermissionEvaluation =
  | { outcome: "allow"; decisionSource: "policy_not_dangerous" | "existing_grant" | "always_allow" }
  | { outcome: "ask"; card: PermissionCard };

/**
 * An app's own danger rule over the real call (source, tool and validated arguments).
 * @returns `true` dangerous, `false` safe, `undefined` to apply the default rule
 */
export type IsDangerous = (request: AuthorizationRequest) => boolean | undefined;

/** The policy of a `PermissionService`. */
export interface PermissionPolicy {
  /** Every call is dangerous (asks unless a grant or `always_allow` covers it). @default false */
  strict?: boolean;
  /** The app's own rule; `undefined` answers fall back to the default rule. */
  isDangerous?: IsDangerous;
  /** The mode of a session nobody has set. @default "ask_for_dangerous" */
  defaultApprovalMode?: ApprovalMode;
}
