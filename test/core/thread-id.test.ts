import { describe, expect, test } from "vitest";
import { DEFAULT_SESSION_ID, idOf, sessionIdOf, threadIdOf } from "../../src/core/thread-id.js";

describe("the thread of a call", () => {
  test.each([
    { input: "a string", value: "t1", thread: "t1" },
    { input: "a string with inner and outer spaces, as it is", value: " t 1 ", thread: " t 1 " },
    { input: "a number", value: 42, thread: "42" },
    { input: "zero", value: 0, thread: "0" },
    { input: "a negative fraction", value: -1.5, thread: "-1.5" },
    { input: "an empty string", value: "", thread: undefined },
    { input: "a whitespace-only string", value: " \t\n", thread: undefined },
    { input: "NaN", value: Number.NaN, thread: undefined },
    { input: "Infinity", value: Number.POSITIVE_INFINITY, thread: undefined },
    { input: "null", value: null, thread: undefined },
    { input: "undefined", value: undefined, thread: undefined },
    { input: "a boolean", value: true, thread: undefined },
    { input: "a bigint", value: 42n, thread: undefined },
    { input: "an object", value: { id: "t1" }, thread: undefined },
    { input: "an array", value: ["t1"], thread: undefined },
  ])("thread_id as $input -> thread $thread, session $thread or default", ({ value, thread }) => {
    const config = { configurable: { thread_id: value } };
    expect(idOf(value)).toBe(thread);
    expect(threadIdOf(config)).toBe(thread);
    expect(sessionIdOf(config)).toBe(thread ?? DEFAULT_SESSION_ID);
  });

  test.each([
    { input: "no config", config: undefined },
    { input: "no configurable", config: {} },
    { input: "configurable: undefined", config: { configurable: undefined } },
    { input: "no thread_id", config: { configurable: { run_id: "r1" } } },
  ])("$input: no thread, session default", ({ config }) => {
    expect(threadIdOf(config)).toBeUndefined();
    expect(sessionIdOf(config ?? {})).toBe("default");
  });
});

describe("the session of a call with the app's resolver", () => {
  const config = { configurable: { thread_id: 7, user: "ada" } };

  test.each([
    { answer: "ada", session: "ada" },
    { answer: " ada ", session: " ada " },
    { answer: undefined, session: "7" },
    { answer: "", session: "7" },
    { answer: "   ", session: "7" },
  ])("resolver answer $answer -> session $session", ({ answer, session }) => {
    expect(sessionIdOf(config, () => answer)).toBe(session);
  });

  test("the resolver sees the call's config", () => {
    expect(sessionIdOf(config, (c) => String(c.configurable.user))).toBe("ada");
  });

  test("a blank answer without a thread is the default session", () => {
    expect(sessionIdOf({ configurable: { thread_id: "" } }, () => "")).toBe("default");
  });
});
