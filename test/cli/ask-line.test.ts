import { PassThrough } from "node:stream";
import { expect, test } from "vitest";
import { askLine } from "../../src/cli/ask-line.js";

const parse = (line: string) => (["a", "b"].includes(line.trim()) ? line.trim() : undefined);

test("asks again after each invalid line and settles with the first valid one", async () => {
  const input = new PassThrough();
  const retries: number[] = [];
  const answer = askLine(input, parse, { retry: () => retries.push(1), onEnd: "end" });
  input.write("x\n\nb\na\n");
  expect(await answer).toBe("b");
  expect(retries).toHaveLength(2);
});

test("end of input without a valid line settles with onEnd", async () => {
  const input = new PassThrough();
  const answer = askLine(input, parse, { retry: () => {}, onEnd: "deny" });
  input.end("nope\n");
  expect(await answer).toBe("deny");
});
