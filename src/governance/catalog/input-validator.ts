import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { RE2JS } from "re2js";
import { GovernanceError, hashCanonical } from "../../core/index.js";

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** One schema violation, with a JSON path into the arguments. */
export interface InputIssue {
  path: string;
  message: string;
}

/** The outcome of validating tool arguments. */
export type InputValidation =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; issues: InputIssue[] };

type JsonSchema = Record<string, unknown>;

// `pattern` and `patternProperties` come from third-party schemas: a linear-time engine (RE2 semantics)
// answers any pattern on any input without backtracking, so no schema can stall the event loop.
const linearRegExp = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(pattern);
    // ajv shares compiled patterns by their string form: it must name the pattern.
    return { test: (text: string) => compiled.test(text), toString: () => `/${pattern}/` };
  },
  { code: "re2js" },
);

/**
 * Validates tool arguments against a tool's JSON Schema with ajv (draft 2020-12, draft-07 keywords
 * accepted). Compiled validators are cached by schema hash. Empty strings for optional properties
 * count as absent, and schema defaults are filled in.
 */
export class InputValidator {
  readonly #ajv = addFormats(
    new Ajv2020({ allErrors: true, strict: false, useDefaults: true, code: { regExp: linearRegExp } }),
  );
  readonly #compiled = new Map<string, ValidateFunction>();
  readonly #bySchema = new WeakMap<JsonSchema, ValidateFunction>();

  /**
   * @param schema the tool's input JSON Schema (an object schema)
   * @param input the arguments as received
   * @returns the cleaned arguments, or every issue with its path
   */
  validate(schema: JsonSchema, input: unknown): InputValidation {
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return { ok: false, issues: [{ path: "", message: "arguments must be a JSON object" }] };
    }
    const value = dropEmptyOptionalStrings(schema, input as Record<string, unknown>);
    const validate = this.#compile(schema);
    if (validate(value)) return { ok: true, value };
    return { ok: false, issues: (validate.errors ?? []).map(toIssue) };
  }

  /**
   * Like `validate`, but throws.
   * @throws GovernanceError `INVALID_INPUT` listing every issue in `data.issues`
   */
  parse(schema: JsonSchema, input: unknown, toolLabel: string): Record<string, unknown> {
    const outcome = this.validate(schema, input);
    if (outcome.ok) return outcome.value;
    const list = outcome.issues.map((i) => `${i.path || "(arguments)"}: ${i.message}`).join("; ");
    throw new GovernanceError("INVALID_INPUT", `Invalid arguments for ${toolLabel}: ${list}`, {
      data: { issues: outcome.issues },
    });
  }

  #compile(schema: JsonSchema): ValidateFunction {
    // The catalog hands the same schema object to every call of a tool: found by identity, it is not
    // serialized and hashed again on each call.
    const known = this.#bySchema.get(schema);
    if (known) return known;
    const validate = this.#compileByContent(schema);
    this.#bySchema.set(schema, validate);
    return validate;
  }

  #compileByContent(schema: JsonSchema): ValidateFunction {
    const key = hashCanonical(schema);
    let validate = this.#compiled.get(key);
    if (!validate) {
      const { $schema: _ignored, ...rest } = schema;
      try {
        validate = this.#ajv.compile(rest);
      } catch (error) {
        // A schema ajv cannot compile (a malformed schema, or a pattern outside RE2's syntax such as a
        // back-reference or look-around) cannot guard a call: the tool is unusable, not the arguments.
        throw new GovernanceError(
          "TOOL_UNAVAILABLE",
          `The tool's input schema cannot be used: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
      this.#compiled.set(key, validate);
    }
    return validate;
  }
}

function dropEmptyOptionalStrings(
  schema: JsonSchema,
  input: Record<string, unknown>,
): Record<string, unknown> {
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  // fromEntries defines own properties: a "__proto__" key parsed from JSON stays a plain key (which the
  // schema then judges), instead of becoming the prototype and lending inherited "arguments" to ajv.
  return Object.fromEntries(
    Object.entries(input).filter(([key, v]) => v !== undefined && !(v === "" && !required.has(key))),
  );
}

function toIssue(error: ErrorObject): InputIssue {
  let path = error.instancePath
    .replace(/^\//, "")
    .replace(/\/(\d+)(?=\/|$)/g, "[$1]")
    .replace(/\//g, ".");
  let message = error.message ?? "is invalid";
  if (error.keyword === "required") {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    path = path ? `${path}.${missing}` : missing;
    message = "is required";
  } else if (error.keyword === "additionalProperties") {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    path = path ? `${path}.${extra}` : extra;
    message = "is not an accepted parameter";
  } else if (error.keyword === "enum") {
    const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
    message = `must be one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}`;
  }
  return { path: path.replace(/^\[/, "[").replace(/^\./, ""), message };
}
