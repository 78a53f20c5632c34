/**
 * The one error family of Sciencegate. Every failure that crosses a public boundary is a
 * `GovernanceError` with a stable string `code`; at the model boundary it becomes a structured
 * result (`toErrorBody`) instead of a throw.
 */

/** Stable error codes. Each one's meaning is part of the public contract. */
export const GOVERNANCE_ERROR_CODES = {
  /** Tool arguments failed the manifest's JSON Schema; `data.issues` lists each problem with its path. */
  INVALID_INPUT: "Tool arguments failed the tool's input schema.",
  /** The source is switched off for this session (or globally in the config). */
  SOURCE_DISABLED: "The source is disabled for this session.",
  /** The tool is unknown, missing from its live server, or its schema is incompatible with the manifest. */
  TOOL_UNAVAILABLE: "The tool is not available in the live catalog.",
  /** The permission policy or a human denied the call; nothing was sent to the server. */
  PERMISSION_DENIED: "The call was not authorized.",
  /** The rate-limit group's queue is at its maximum depth. */
  RATE_LIMIT_QUEUE_FULL: "The rate-limit queue of the source's group is full.",
  /** The call waited longer than the group's queue timeout. */
  RATE_LIMIT_QUEUE_TIMEOUT: "The call waited too long in the rate-limit queue.",
  /** The provider answered 429 after every retry. */
  RATE_LIMITED: "The provider rate-limited the call.",
  /**
   * The principal's quota for this tool or source is used up for the current window (`data.rule`);
   * `retryAfterMs` says when the window ends. Nothing was sent.
   */
  QUOTA_EXCEEDED: "The caller's quota for this tool or source is used up for now.",
  /** The overall deadline passed; the MCP request was cancelled. */
  TIMEOUT: "The call did not finish before its deadline.",
  /**
   * An upstream server asked for input (an elicitation) that a person must give: the call paused and
   * recorded its question (`data.questions`), and continues when invoked again with the answers.
   */
  INPUT_REQUIRED: "The upstream server asked for input a person must give.",
  /** The caller aborted the call, or `close()` cut it or refused it. */
  CANCELLED: "The call was cancelled.",
  /**
   * The response was larger than the source's `maxResponseBytes` or a stdio server's read buffer, or a
   * PDF crossed an extraction bound (`data.limit`).
   */
  RESPONSE_TOO_LARGE: "The response exceeded the source's size cap.",
  /** The provider has no such record. */
  NOT_FOUND: "The provider has no such record.",
  /** The provider or server refused our credentials. */
  UNAUTHORIZED: "The provider refused the credentials.",
  /** The server or provider failed or could not be reached (transport, connection closed, spawn, 5xx). */
  UPSTREAM_UNAVAILABLE: "The server or provider is unavailable.",
  /** The tool itself raised or reported an error (its own exception, or an `isError` result); not retryable. */
  TOOL_FAILED: "The tool raised or reported an error.",
  /** The result could not be turned into a valid `McpToolResult`. */
  NORMALIZATION_FAILED: "The result could not be normalized.",
  /** The licence of the data forbids the requested use. */
  LICENSE_BLOCKED: "The licence forbids this use.",
  /**
   * A replay from a research object met a call the crate did not record, or recorded only by its hash
   * (a private source, a licence that forbids copying); nothing was sent anywhere.
   */
  NOT_RECORDED: "The research object holds no answer for this call.",
  /** A configuration file is missing or invalid; the message names the file, the field and the fix. */
  INVALID_CONFIG: "A configuration file is invalid.",
  /** A source manifest is invalid; the message names the file, the JSON path and the reason. */
  INVALID_MANIFEST: "A source manifest is invalid.",
  /** A source or tool id was registered twice. */
  DUPLICATE_ID: "An id was registered twice.",
  /** A source, tool or server id is not known. */
  UNKNOWN_ID: "An id is not known.",
} as const;

/** One of the stable error codes of `GOVERNANCE_ERROR_CODES` (its keys). */
export type GovernanceErrorCode = keyof typeof GOVERNANCE_ERROR_CODES;

/** Options of a `GovernanceError`. */
export interface GovernanceErrorOptions {
  /** Whether the same call may succeed later. @default false */
  retryable?: boolean;
  /** How long to wait before retrying, when the upstream said so. */
  retryAfterMs?: number;
  /** How many attempts were made. */
  attempts?: number;
  /** Structured details (for example `{ issues }` for `INVALID_INPUT`). */
  data?: Record<string, unknown>;
  /** The underlying error. */
  cause?: unknown;
}

/** The structured body a model or CLI user sees for a failure. */
export interface GovernanceErrorBody {
  code: GovernanceErrorCode;
  message: string;
  retryable: boolean;
  attempts: number;
  retryAfterMs?: number;
  data?: Record<string, unknown>;
}

/**
 * Marks every member of the family, subclasses included (whose `name` is their own, such as
 * `ToolError`). `Symbol.for` keys are shared by every copy of the package in a process.
 */
const FAMILY = Symbol.for("sciencegate.GovernanceError");

/**
 * An error with a stable `code`.
 * @example
 * throw new GovernanceError("SOURCE_DISABLED", "Source 'pubmed' is disabled for session s1.");
 */
export class GovernanceError extends Error {
  override readonly name: string = "GovernanceError";
  readonly code: GovernanceErrorCode;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly attempts: number;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: GovernanceErrorCode, message: string, options: GovernanceErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
    this.attempts = options.attempts ?? 0;
    this.data = options.data;
  }

  /** The structured body of this error, for ledgers, tool messages and `--json` output. */
  toJSON(): GovernanceErrorBody {
    return toErrorBody(this);
  }
}
Object.defineProperty(GovernanceError.prototype, FAMILY, { value: true });

/**
 * Whether `value` is a `GovernanceError` or one of its subclasses (such as `ToolError`), checked by
 * `name` or the family mark and by `code`, not by `instanceof`, so that two copies of the package still
 * recognise each other's errors.
 * @param value anything caught
 * @returns true when `value` carries a known governance error code
 */
export function isGovernanceError(value: unknown): value is GovernanceError {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as { name?: unknown; code?: unknown; [FAMILY]?: unknown };
  return (
    (candidate.name === "GovernanceError" || candidate[FAMILY] === true) &&
    typeof candidate.code === "string" &&
    Object.hasOwn(GOVERNANCE_ERROR_CODES, candidate.code)
  );
}

/**
 * The structured body of a governance error.
 * @param error a `GovernanceError`
 * @returns `{code, message, retryable, attempts, retryAfterMs?, data?}`
 */
export function toErrorBody(error: GovernanceError): GovernanceErrorBody {
  const body: GovernanceErrorBody = {
    code: error.code,
    message: error.message,
    retryable: error.retryable,
    attempts: error.attempts,
  };
  if (error.retryAfterMs !== undefined) body.retryAfterMs = error.retryAfterMs;
  if (error.data !== undefined) body.data = error.data;
  return body;
}

/**
 * Refuses a call of a public function that takes the runtime as `{ governance, … }` made the way it was
 * before (the runtime as a positional argument), so a plain JavaScript caller learns the new form
 * instead of meeting a `TypeError` deep inside.
 * @param options what the function was given
 * @param name the function's name, for the message
 * @throws GovernanceError `INVALID_CONFIG` when `options` is not an object with a `governance` field
 */
export function requireGovernanceOption(options: unknown, name: string): void {
  if (
    typeof options === "object" &&
    options !== null &&
    (options as { governance?: unknown }).governance != null
  )
    return;
  throw new GovernanceError(
    "INVALID_CONFIG",
    `${name} takes one options object with the runtime in its governance field: ${name}({ governance, … }).`,
  );
}
