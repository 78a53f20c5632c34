/**
 * `$VAR` substitution in configuration strings. Hand-written because the libraries we know (dotenv-expand,
 * envsubst ports) turn an unset variable into an empty string, while Sciencegate must report it.
 */

/** The environment a config is read against (`process.env` by default). */
export type EnvMap = Readonly<Record<string, string | undefined>>;

/** The outcome of substituting one string. */
export interface EnvSubstitution {
  /** The text with every resolvable reference replaced; unresolved references are left as written. */
  value: string;
  /** Names of variables that were referenced without a default and are not set, in order of appearance. */
  missing: string[];
  /** A syntax problem (for example an unterminated `${`), phrased to follow the field path. */
  syntaxError?: string;
}

/**
 * Well-known values, offered in the "write a default" hint of a missing-variable error.
 * Only a hint: an unset variable is still an error, never silently defaulted.
 */
const KNOWN_DEFAULTS: Readonly<Record<string, string>> = {
  SCIENCE_AGENT_LLM_WIKI_URL: "http://127.0.0.1:8100",
};

const NAME_START = /[A-Za-z_]/;
const NAME_PART = /[A-Za-z0-9_]/;

/**
 * Replaces `$VAR`, `${VAR}` and `${VAR:-default}` in `text`; `$$` is a literal `$`.
 * The default is used when the variable is unset or empty and may itself contain references.
 * A `$` not followed by a name, `{` or `$` is kept as is (so `"^a$"` or `"$5"` survive).
 * @param text a string value from a config file
 * @param env the environment to read variables from
 * @returns the substituted text, the unset variables and any syntax error; never throws
 * @example
 * substituteEnv("${HOST:-localhost}:$PORT", { PORT: "8100" }).value // "localhost:8100"
 */
export function substituteEnv(text: string, env: EnvMap): EnvSubstitution {
  const missing: string[] = [];
  let out = "";
  let i = 0;
  while (i < text.length) {
    const char = text[i];
    const next = text[i + 1];
    if (char !== "$" || next === undefined) {
      out += char;
      i += 1;
    } else if (next === "$") {
      out += "$";
      i += 2;
    } else if (next === "{") {
      const braced = substituteBraced(text, i, env);
      if (braced.syntaxError !== undefined) return { value: text, missing, syntaxError: braced.syntaxError };
      out += braced.value;
      missing.push(...braced.missing);
      i = braced.end;
    } else if (NAME_START.test(next)) {
      const end = scanName(text, i + 1);
      const name = text.slice(i + 1, end);
      const value = lookup(env, name);
      if (value === undefined) missing.push(name);
      out += value ?? text.slice(i, end);
      i = end;
    } else {
      out += char;
      i += 1;
    }
  }
  return { value: out, missing };
}

/**
 * The fix sentence of a missing-variable error, with a concrete default when one is known.
 * @param name the unset variable
 * @returns for example `Set it, or write ${NAME:-value} for a default.`
 */
export function missingVariableFix(name: string): string {
  const example = (Object.hasOwn(KNOWN_DEFAULTS, name) ? KNOWN_DEFAULTS[name] : undefined) ?? "<value>";
  return `Set it, or write \${${name}:-${example}} for a default.`;
}

/**
 * Reads a variable without falling through to `Object.prototype` (`process.env.constructor` is a function).
 * @param env the environment
 * @param name the variable name
 * @returns its value, or undefined when unset
 */
export function lookup(env: EnvMap, name: string): string | undefined {
  return Object.hasOwn(env, name) ? env[name] : undefined;
}

interface BracedResult extends EnvSubstitution {
  end: number;
}

function substituteBraced(text: string, start: number, env: EnvMap): BracedResult {
  const nameStart = start + 2;
  const nameEnd =
    text[nameStart] !== undefined && NAME_START.test(text[nameStart]!)
      ? scanName(text, nameStart)
      : nameStart;
  const name = text.slice(nameStart, nameEnd);
  const fail = (syntaxError: string): BracedResult => ({ value: "", missing: [], syntaxError, end: nameEnd });
  if (name === "") return fail(`has "\${" without a variable name; write $$ for a literal "$"`);
  if (text[nameEnd] === "}") {
    const value = lookup(env, name);
    return {
      value: value ?? text.slice(start, nameEnd + 1),
      missing: value === undefined ? [name] : [],
      end: nameEnd + 1,
    };
  }
  if (!text.startsWith(":-", nameEnd)) {
    return nameEnd >= text.length
      ? fail(`has an unterminated "\${${name}"; close it with "}"`)
      : fail(
          `uses an unsupported form "\${${name}${text[nameEnd]}..."; write \${${name}} or \${${name}:-default}`,
        );
  }
  const close = findClosingBrace(text, nameEnd + 2);
  if (close === -1) return fail(`has an unterminated "\${${name}:-"; close it with "}"`);
  const value = lookup(env, name);
  if (value !== undefined && value !== "") return { value, missing: [], end: close + 1 };
  const fallback = substituteEnv(text.slice(nameEnd + 2, close), env);
  return { ...fallback, end: close + 1 };
}

/** Finds the `}` that closes a default, skipping nested `${...}` and `$$`. */
function findClosingBrace(text: string, from: number): number {
  let depth = 1;
  let i = from;
  while (i < text.length) {
    if (text[i] === "$" && (text[i + 1] === "$" || text[i + 1] === "{")) {
      if (text[i + 1] === "{") depth += 1;
      i += 2;
      continue;
    }
    if (text[i] === "}") {
      depth -= 1;
      if (depth === 0) return i;
    }
    i += 1;
  }
  return -1;
}

function scanName(text: string, from: number): number {
  let end = from;
  while (end < text.length && NAME_PART.test(text[end]!)) end += 1;
  return end;
}
