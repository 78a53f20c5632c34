/** The Science ADK's error for a misconfigured tool provider, printed exactly as the seed shows it. */

/**
 * A tool provider that cannot be set up (an unset `token_env` variable). `String(error)` reads
 * `ToolError: <message>`, the seed's wording; `code` is `INVALID_CONFIG` so callers can branch on it.
 */
export class ToolError extends Error {
  override readonly name = "ToolError";
  /** Always `INVALID_CONFIG`: the fix is in the environment or `science.toml`. */
  readonly code = "INVALID_CONFIG" as const;
  /** The provider named in `science.toml`. */
  readonly provider: string;

  /**
   * @param provider the `[tools.<provider>]` key
   * @param message the whole message, naming the provider and the fix
   */
  constructor(provider: string, message: string) {
    super(message);
    this.provider = provider;
  }
}

/**
 * Whether a value is a {@link ToolError}, checked by name (two package copies break `instanceof`).
 * @param value anything caught
 * @returns true for a ToolError
 */
export function isToolError(value: unknown): value is ToolError {
  return value instanceof Error && value.name === "ToolError";
}
