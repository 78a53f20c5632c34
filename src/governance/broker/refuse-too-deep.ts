/**
 * Measuring, storing and normalizing walk a server's result recursively; a result nested deeper than
 * the stack allows (a `RangeError`) is a malformed result, refused like one, not an upstream outage.
 */
import { GovernanceError } from "../../core/index.js";

/**
 * Turns a stack overflow of a recursive walk into a refusal of the result; rethrows anything else.
 * @param error what the walk threw
 * @returns never
 * @throws {GovernanceError} `NORMALIZATION_FAILED` for a `RangeError`; otherwise `error` itself
 */
export function refuseTooDeep(error: unknown): never {
  if (!(error instanceof RangeError)) throw error;
  throw new GovernanceError("NORMALIZATION_FAILED", `The result could not be checked: ${error.message}.`, {
    cause: error,
  });
}

/**
 * Runs a synchronous recursive walk over a result, refusing a result too deep to walk.
 * @param step the walk
 * @returns what `step` returns
 * @throws {GovernanceError} `NORMALIZATION_FAILED` when `step` overflows the stack; else what `step` throws
 */
export function checkingDepth<T>(step: () => T): T {
  try {
    return step();
  } catch (error) {
    return refuseTooDeep(error);
  }
}
