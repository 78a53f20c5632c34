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

/**
 * A file whose tools need something that is not installed (an optional peer such as `tsx` or
 * `typescript`, or the Python interpreter): only that file's tools are left out, with this as the reason.
 */
export class MissingRequirement extends Error {
  override readonly name = "MissingRequirement";

  /**
   * @param requirement what is missing, e.g. `tsx`
   * @param fix how to get it, e.g. `npm install tsx`
   * @param cause the failure that showed it
   */
  constructor(
    readonly requirement: string,
    readonly fix: string,
    cause?: unknown,
  ) {
    super(`need ${requirement}, which is not installed (${fix})`, { cause });
  }
}

/**
 * Imports an optional peer, turning "not installed" into a {@link MissingRequirement}.
 * @param name the package, e.g. `tsx`
 * @param load the import (a literal specifier, so bundlers and type checkers see it)
 * @param why what the package is for, named in the fix
 * @returns the module
 * @throws MissingRequirement when the package cannot be found; anything else unchanged
 */
export async function importPeer<T>(name: string, load: () => Promise<T>, why: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") {
      throw new MissingRequirement(name, `npm install ${name}: ${why}`, error);
    }
    throw error;
  }
}
