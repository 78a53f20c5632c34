/** Configuration problems: one shape for every issue, and the `INVALID_CONFIG` error that reports them all. */
import type { z } from "zod";
import { GovernanceError, redactUrls } from "../core/index.js";

/** One problem in a configuration file. */
export interface ConfigIssue {
  /** The field, e.g. `mcpServers.pubmed.args[1]`; empty for the whole file. */
  path: string;
  /** What is wrong and how to fix it, phrased to follow the path (`must be a string, not a number. ...`). */
  message: string;
}

type PathSegment = string | number;

const PLAIN_KEY = /^[A-Za-z0-9_-]+$/;

/**
 * Formats a field path the way users read it: `mcpServers.llm-wiki.args[1]`, `headers["X Key"]`.
 * @param segments object keys and array indexes from the root
 * @returns the dotted path, or "" for the root
 */
export function formatFieldPath(segments: readonly PathSegment[]): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/**
 * Describes a JSON value's type for a message (`a number`, `the string "false"`, `null`).
 * @param value any parsed JSON value
 * @returns a short phrase; a URL in a string is redacted (`redactUrls`)
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  // A URL in a value keeps its secrets (query values, user information) out of the message.
  if (typeof value === "string")
    return value.length <= 40 ? `the string ${JSON.stringify(redactUrls(value))}` : "a string";
  if (typeof value === "object") return "an object";
  if (typeof value === "number") return `the number ${value}`;
  return `${typeof value === "boolean" ? "the boolean" : "a"} ${String(value)}`;
}

/** How to fix a wrongly typed field, keyed by the field name (or the container of an element). */
const TYPE_FIXES: Readonly<Record<string, string>> = {
  mcpServers: 'Write it as an object mapping server ids to settings, e.g. {"pubmed": {"command": "node"}}.',
  args: 'Write args as an array of strings, e.g. ["-y", "my-server", "--port", "8100"].',
  env: 'Write it as an object of string values, e.g. {"API_KEY": "$API_KEY"}.',
  headers: 'Write it as an object of string values, e.g. {"X-Api-Key": "$API_KEY"}.',
  keywords: 'Write keywords as an array of strings, e.g. ["protein", "uniprot"].',
  tools: 'Write it as an object keyed by MCP tool name, e.g. {"search": {"routing": {"mode": "prefer"}}}.',
  routing: 'Write it as an object, e.g. {"keywords": ["pubmed"], "mode": "prefer", "priority": 60}.',
  tool_call_timeout: "Write the number of seconds without quotes, e.g. 60.",
  gateway_tool_names:
    'Write "upstream" (the server\'s own tool names) or "qualified" (mcp__<server>__<tool>).',
  priority: "Write a number from 0 to 100 without quotes, e.g. 60.",
  defaultToolTimeout: "Write the number of milliseconds without quotes, e.g. 30000.",
  roots: 'Write roots as an array of absolute paths or file:// URIs, e.g. ["/data/papers"].',
  oauth:
    'Write it as an object, e.g. {"grant": "client_credentials", "clientId": "my-app", "clientSecretEnv": "MY_SECRET"}, or false.',
};

/** The fix for a field; own keys only, so a field named `constructor` has none. */
function typeFix(field: string): string | undefined {
  return Object.hasOwn(TYPE_FIXES, field) ? TYPE_FIXES[field] : undefined;
}

/**
 * Turns zod issues into config issues with user-facing paths and fixes.
 * @param issues `error.issues` of a failed `safeParse`
 * @param input the value that was parsed (to say what was found instead)
 * @param prefix path segments of `input` inside the file
 * @returns one config issue per zod issue
 */
export function fromZodIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  prefix: readonly PathSegment[],
): ConfigIssue[] {
  return issues.flatMap((issue) => {
    const segments = issue.path.filter((s): s is PathSegment => typeof s !== "symbol");
    // An object given to a "false or an object" field: what is wrong inside the object says more
    // than "unsupported value".
    const actual = valueAt(input, segments);
    if (issue.code === "invalid_union" && typeof actual === "object" && actual !== null) {
      const inside = issue.errors.find(
        (branch) => branch.length > 0 && branch.every((i) => i.path.length > 0),
      );
      if (inside !== undefined) return fromZodIssues(inside, actual, [...prefix, ...segments]);
    }
    return [
      {
        path: formatFieldPath([...prefix, ...segments]),
        message: zodIssueMessage(issue, input, segments),
      },
    ];
  });
}

function zodIssueMessage(issue: z.core.$ZodIssue, input: unknown, segments: PathSegment[]): string {
  const actual = valueAt(input, segments);
  const field = fieldName(segments);
  switch (issue.code) {
    case "invalid_type": {
      const quotable =
        issue.expected === "string" && (typeof actual === "number" || typeof actual === "boolean");
      const fix = quotable
        ? "Put the value in double quotes."
        : (typeFix(field) ?? "Correct the value or remove the field.");
      return `must be ${expectedPhrase(issue.expected)}, not ${describeValue(actual)}. ${fix}`;
    }
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, not ${describeValue(actual)}.`;
    case "too_small":
      return `must be ${issue.inclusive ? "at least" : "greater than"} ${String(issue.minimum)}, not ${describeValue(actual)}. ${typeFix(field) ?? ""}`.trim();
    case "invalid_union":
      return `has an unsupported value (${describeValue(actual)}). ${issue.message}`;
    default:
      return `${issue.message}.`;
  }
}

/** The user-facing name of the field an issue is about; array elements are named after their array. */
function fieldName(segments: readonly PathSegment[]): string {
  for (let i = segments.length - 1; i >= 0; i -= 1) {
    const segment = segments[i];
    if (typeof segment !== "string") continue;
    // A value inside env/headers/tools is keyed by user data, so the container names the fix.
    const parent = segments[i - 1];
    if (parent === "env" || parent === "headers" || parent === "tools") return "";
    return segment;
  }
  return "";
}

function expectedPhrase(expected: string): string {
  if (expected === "boolean") return "true or false";
  if (expected === "record" || expected === "object") return "an object";
  if (expected === "array") return "an array";
  return `a ${expected}`;
}

function valueAt(input: unknown, segments: readonly PathSegment[]): unknown {
  let current = input;
  for (const segment of segments) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<PathSegment, unknown>)[segment];
  }
  return current;
}

/**
 * The `INVALID_CONFIG` error for a list of issues: one message naming the file, every field and its fix.
 * @param file the config file (or a label for a config object given in code)
 * @param issues at least one issue
 * @returns a `GovernanceError` with `data: {file, path, reason, issues}` (path/reason of the first issue)
 */
export function configError(file: string, issues: readonly ConfigIssue[]): GovernanceError {
  const first = issues[0] ?? { path: "", message: "is invalid." };
  const line = (issue: ConfigIssue) => (issue.path === "" ? issue.message : `${issue.path} ${issue.message}`);
  const message =
    issues.length <= 1
      ? `${file}: ${line(first)}`
      : `${file} has ${issues.length} problems:\n${issues.map((issue) => `  - ${line(issue)}`).join("\n")}`;
  return new GovernanceError("INVALID_CONFIG", message, {
    data: { file, path: first.path, reason: first.message, issues: [...issues] },
  });
}
