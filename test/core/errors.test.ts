import { describe, expect, test } from "vitest";
import {
  GOVERNANCE_ERROR_CODES,
  GovernanceError,
  isGovernanceError,
  toErrorBody,
} from "../../src/core/errors.js";

describe("GovernanceError", () => {
  test.each(Object.keys(GOVERNANCE_ERROR_CODES) as (keyof typeof GOVERNANCE_ERROR_CODES)[])(
    "%s round-trips through its structured body",
    (code) => {
      const error = new GovernanceError(code, `failed with ${code}`, { retryable: true, attempts: 2 });
      expect(isGovernanceError(error)).toBe(true);
      expect(toErrorBody(error)).toEqual({
        code,
        message: `failed with ${code}`,
        retryable: true,
        attempts: 2,
      });
    },
  );

  test("recognises a copy from another package instance by name and code", () => {
    const foreign = Object.assign(new Error("x"), { name: "GovernanceError", code: "TIMEOUT" });
    expect(isGovernanceError(foreign)).toBe(true);
    expect(isGovernanceError(Object.assign(new Error("x"), { name: "GovernanceError", code: "NOPE" }))).toBe(
      false,
    );
    expect(isGovernanceError(new Error("plain"))).toBe(false);
    expect(isGovernanceError(null)).toBe(false);
  });

  test("recognises a subclass with its own name (the family mark), not an unrelated error of that name", () => {
    class ProviderError extends GovernanceError {
      override readonly name: string = "ProviderError";
    }
    const error = new ProviderError("INVALID_CONFIG", "token missing");
    expect(String(error)).toBe("ProviderError: token missing");
    expect(isGovernanceError(error)).toBe(true);
    expect(
      isGovernanceError(Object.assign(new Error("x"), { name: "ProviderError", code: "INVALID_CONFIG" })),
    ).toBe(false);
  });

  test("keeps retryAfterMs and data in the body", () => {
    const error = new GovernanceError("RATE_LIMITED", "slow down", {
      retryable: true,
      retryAfterMs: 2000,
      data: { status: 429 },
    });
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({ retryAfterMs: 2000, data: { status: 429 } });
  });
});
