import { describe, expect, test } from "vitest";
import { isGovernanceError } from "../../../src/core/errors.js";
import { InputValidator } from "../../../src/governance/catalog/input-validator.js";

const schema = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  properties: {
    query: { type: "string", minLength: 1 },
    max_results: { type: "integer", minimum: 1, maximum: 100, default: 10 },
    sort: { type: "string", enum: ["relevance", "date"] },
    ids: { type: "array", items: { type: "string" }, maxItems: 2 },
  },
  required: ["query"],
  additionalProperties: false,
};

describe("InputValidator", () => {
  const validator = new InputValidator();

  test("fills defaults and keeps valid arguments", () => {
    expect(validator.validate(schema, { query: "brca1" })).toEqual({
      ok: true,
      value: { query: "brca1", max_results: 10 },
    });
  });

  test("treats an empty string for an optional field as absent", () => {
    expect(validator.validate(schema, { query: "x", sort: "" })).toEqual({
      ok: true,
      value: { query: "x", max_results: 10 },
    });
  });

  test("an empty string for a required field is still checked", () => {
    const outcome = validator.validate(schema, { query: "" });
    expect(outcome).toMatchObject({ ok: false, issues: [{ path: "query" }] });
  });

  test.each([
    [{}, "query", "is required"],
    [{ query: "x", max_results: 0 }, "max_results", "must be >= 1"],
    [{ query: "x", max_results: "ten" }, "max_results", "must be integer"],
    [{ query: "x", sort: "popular" }, "sort", 'must be one of "relevance", "date"'],
    [{ query: "x", ids: ["a", 3] }, "ids[1]", "must be string"],
    [{ query: "x", ids: ["a", "b", "c"] }, "ids", "must NOT have more than 2 items"],
    [{ query: "x", evil: 1 }, "evil", "is not an accepted parameter"],
  ])("%j -> %s %s", (input, path, message) => {
    const outcome = validator.validate(schema, input);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.issues).toContainEqual({ path, message });
  });

  test("lists every issue at once and throws INVALID_INPUT from parse", () => {
    let caught: unknown;
    try {
      validator.parse(schema, { max_results: 500, sort: "nope" }, "mcp__pubmed__search");
    } catch (error) {
      caught = error;
    }
    expect(isGovernanceError(caught)).toBe(true);
    if (!isGovernanceError(caught)) return;
    expect(caught.code).toBe("INVALID_INPUT");
    expect(caught.data?.issues).toHaveLength(3);
    expect(caught.message).toContain("mcp__pubmed__search");
  });

  test("rejects non-object arguments", () => {
    expect(validator.validate(schema, [1])).toMatchObject({ ok: false });
    expect(validator.validate(schema, null)).toMatchObject({ ok: false });
  });
});

describe("patterns of third-party schemas (regular-expression denial of service)", () => {
  const validator = new InputValidator();
  const hostile = {
    type: "object",
    properties: { name: { type: "string", pattern: "^(a+)+$" } },
    required: ["name"],
  };

  test("a catastrophic pattern on a 32-character attack string is answered at once", () => {
    // With a backtracking engine this input takes seconds, doubling per added character.
    const started = performance.now();
    const outcome = validator.validate(hostile, { name: `${"a".repeat(32)}!` });
    const elapsedMs = performance.now() - started;
    expect(outcome).toMatchObject({ ok: false, issues: [{ path: "name" }] });
    expect(elapsedMs).toBeLessThan(1_000);
    console.log(`hostile pattern ^(a+)+$ on 32 a's and '!': INVALID_INPUT in ${elapsedMs.toFixed(1)} ms`);
  });

  test("patterns still match as JSON Schema says: anywhere in the string unless anchored", () => {
    const schema = {
      type: "object",
      properties: { id: { type: "string", pattern: "^PMC\\d+$" }, word: { type: "string", pattern: "brca" } },
      patternProperties: { "^x-": { type: "integer" } },
    };
    expect(validator.validate(schema, { id: "PMC123", word: "about brca1" }).ok).toBe(true);
    expect(validator.validate(schema, { id: "PMC12a" })).toMatchObject({
      ok: false,
      issues: [{ path: "id" }],
    });
    expect(validator.validate(schema, { "x-n": "one" })).toMatchObject({
      ok: false,
      issues: [{ path: "x-n" }],
    });
  });

  test("a pattern outside RE2's syntax makes the tool unavailable, not the arguments invalid", () => {
    const schema = { type: "object", properties: { pair: { type: "string", pattern: "(a)\\1" } } };
    let caught: unknown;
    try {
      validator.parse(schema, { pair: "aa" }, "hostile/echo");
    } catch (error) {
      caught = error;
    }
    expect(isGovernanceError(caught) && caught.code).toBe("TOOL_UNAVAILABLE");
  });
});
