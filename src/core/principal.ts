/**
 * Who a call is made for: the principal. It is a plain string (an OAuth token's subject, an app's user
 * id) that the governance records on every row and binds grants, approval modes, pending cards and
 * quotas to; absent, the call is the single user's of a deployment without identities. One rule says
 * what a principal may look like, wherever it enters (an access token, a LangGraph run's config).
 */
import { GovernanceError } from "./errors.js";
import type { ThreadConfig } from "./thread-id.js";

/** The longest principal accepted (OAuth subjects are at most 255 ASCII characters in practice). */
export const MAX_PRINCIPAL_LENGTH = 256;

// Control characters (a NUL cannot be stored in PostgreSQL text) and lone surrogates (not text).
const UNPRINTABLE =
  /[\p{Cc}\p{Zl}\p{Zp}]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u;

/**
 * Checks a principal where it enters. A blank or absent value is no principal (the single user).
 * @param value the candidate (a token's claim, a resolver's answer)
 * @param what where it came from, for the error message @default "principal"
 * @returns the principal as given, or `undefined` for `undefined`, `null` or a blank string
 * @throws GovernanceError `INVALID_INPUT` for a value that is not a string, longer than
 *   `MAX_PRINCIPAL_LENGTH`, or with a control character, a line separator or a lone surrogate
 */
export function checkPrincipal(value: unknown, what = "principal"): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") {
    throw new GovernanceError("INVALID_INPUT", `The ${what} must be a string; got ${typeof value}.`, {
      data: { field: "principal" },
    });
  }
  if (value.trim() === "") return undefined;
  if (value.length > MAX_PRINCIPAL_LENGTH || UNPRINTABLE.test(value)) {
    throw new GovernanceError(
      "INVALID_INPUT",
      `The ${what} is not a valid principal: use at most ${MAX_PRINCIPAL_LENGTH} printable characters.`,
      { data: { field: "principal" } },
    );
  }
  return value;
}

/**
 * Whether a value is a principal `checkPrincipal` accepts as one (a non-blank, printable string).
 * @param value the candidate
 */
export function isPrincipal(value: unknown): value is string {
  try {
    return checkPrincipal(value) !== undefined;
  } catch {
    return false;
  }
}

/**
 * The principal of a LangGraph call: the app's resolver reads it from the run's config (where the
 * app's server put the authenticated user), checked by `checkPrincipal`. Without a resolver there is
 * none: nothing in a config is trusted as an identity unless the app says where it comes from.
 * @param config the call's config
 * @param resolver the app's resolver
 * @returns the principal, or `undefined` (no resolver, or a blank answer)
 * @throws GovernanceError `INVALID_INPUT` for an answer that is not a valid principal
 */
export function principalOf<C extends ThreadConfig>(
  config: C,
  resolver?: ((config: C) => string | undefined) | undefined,
): string | undefined {
  return resolver === undefined ? undefined : checkPrincipal(resolver(config), "principal resolver's answer");
}
