/** The shape every local function tool has, whatever language it is written in. */

/** A JSON Schema object (draft 2020-12 subset) describing one tool's arguments. */
export type JsonSchema = Record<string, unknown>;

/** One local function exposed as a tool. */
export interface LocalTool {
  /** The function name, which is the tool name. */
  name: string;
  /** The doc comment (TSDoc summary and remarks, or the Python docstring). */
  description: string;
  /** `{type: "object", properties, required?}` built from the parameter types and defaults. */
  inputSchema: JsonSchema & { type: "object"; properties: Record<string, JsonSchema> };
  /** The file that defines it. */
  file: string;
  /**
   * Runs the function; a thrown error is the tool's failure and is never turned into a value. A
   * `GovernanceError` `UPSTREAM_UNAVAILABLE` means the function could not be run (its interpreter).
   */
  run(args: Record<string, unknown>): Promise<unknown>;
}
