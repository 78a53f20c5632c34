/** The Science ADK's error for a misconfigured tool provider, printed in one fixed form. */
import { GovernanceError, isGovernanceError } from "../core/index.js";

/**
 * A tool provider that cannot be set up (an unset `token_env` variable). A member of the
 * `GovernanceError` family (`isGovernanceError` is true) with code `INVALID_CONFIG`, since the fix is in
 * the environment or `science.toml`; `String(error)` reads `ToolError: <message>`.
 */
export class ToolError extends GovernanceError {
  override readonly name: string = "ToolError";
  /** Always `INVALID_CONFIG`: the fix is in the environment or `science.toml`. */
  declare readonly code: "INVALID_CONFIG";
  /** The provider named in `science.toml`. */
  readonly provider: string;

  /**
   * @param provider the `[tools.<provider>]` key (also in `data.provider`)
   * @param message the whole message, naming the provider and the fix
   */
  constructor(provider: string, message: string) {
    super("INVALID_CONFIG", message, { data: { provider } });
    this.provider = provider;
  }
}

/**
 * Whether a value is a {@link ToolError}, checked by name and family (two package copies break `instanceof`).
 * @param value anything caught
 * @returns true for a ToolError
 */
export function isToolError(value: unknown): value is ToolError {
  return isGovernanceError(value) && value.name === "ToolError";
}
