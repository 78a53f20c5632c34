// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config values with ${VAR} references, not templates.
import { describe, expect, test } from "vitest";
import { missingVariableFix, substituteEnv } from "../../src/config/env-substitution.js";

const env = {
  HOST: "example.org",
  PORT: "8100",
  EMPTY: "",
  SCIENCE_AGENT_LLM_WIKI_URL: "http://wiki.internal:8100",
};

describe("substituteEnv", () => {
  test.each([
    ["$HOST", "example.org"],
    ["${HOST}", "example.org"],
    ["http://$HOST:$PORT/mcp", "http://example.org:8100/mcp"],
    ["${HOST}suffix", "example.orgsuffix"],
    ["$HOST.suffix", "example.org.suffix"],
    ["${UNSET_VAR:-fallback}", "fallback"],
    ["${EMPTY:-fallback}", "fallback"],
    ["${HOST:-fallback}", "example.org"],
    ["${UNSET_VAR:-}", ""],
    ["${UNSET_VAR:-http://$HOST:${PORT}}", "http://example.org:8100"],
    ["${UNSET_VAR:-${OTHER_UNSET:-deep}}", "deep"],
    ["${UNSET_VAR:-a}b}", "ab}"],
    ["cost $$5", "cost $5"],
    ["$$HOST", "$HOST"],
    ["${UNSET_VAR:-$$}", "$"],
    ["^anchored$", "^anchored$"],
    ["$5 and $ alone", "$5 and $ alone"],
    ["$EMPTY", ""],
    ["no variables", "no variables"],
    ["$SCIENCE_AGENT_LLM_WIKI_URL", "http://wiki.internal:8100"],
  ])("%j -> %j", (input, expected) => {
    expect(substituteEnv(input, env)).toEqual({ value: expected, missing: [] });
  });

  test.each([
    ["$MISSING_A", ["MISSING_A"], "$MISSING_A"],
    ["${MISSING_A}", ["MISSING_A"], "${MISSING_A}"],
    ["$MISSING_A/${MISSING_B}/$HOST", ["MISSING_A", "MISSING_B"], "$MISSING_A/${MISSING_B}/example.org"],
    ["${UNSET_VAR:-$MISSING_C}", ["MISSING_C"], "$MISSING_C"],
  ])("reports unset variables in %j and keeps their reference as written", (input, missing, value) => {
    expect(substituteEnv(input, env)).toEqual({ value, missing });
  });

  test("does not read inherited properties as variables", () => {
    expect(substituteEnv("$constructor", {}).missing).toEqual(["constructor"]);
  });

  test.each([
    ["${", /without a variable name/],
    ["${}", /without a variable name/],
    ["${1ABC}", /without a variable name/],
    ["${HOST", /unterminated "\$\{HOST"/],
    ["${HOST:-never closed", /unterminated "\$\{HOST:-"/],
    ["${HOST-default}", /unsupported form .*\$\{HOST:-default\}/],
    ["${HOST:?error}", /unsupported form/],
  ])("rejects the malformed reference %j", (input, reason) => {
    const result = substituteEnv(input, env);
    expect(result.syntaxError).toMatch(reason);
    expect(result.value).toBe(input);
  });
});

describe("missingVariableFix", () => {
  test("offers the default LLM Wiki URL", () => {
    expect(missingVariableFix("SCIENCE_AGENT_LLM_WIKI_URL")).toBe(
      "Set it, or write ${SCIENCE_AGENT_LLM_WIKI_URL:-http://127.0.0.1:8100} for a default.",
    );
  });

  test("offers a placeholder default for other variables", () => {
    expect(missingVariableFix("API_KEY")).toBe("Set it, or write ${API_KEY:-<value>} for a default.");
  });
});
