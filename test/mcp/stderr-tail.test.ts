import { PassThrough } from "node:stream";
import { describe, expect, test } from "vitest";
import { StderrTail } from "../../src/mcp/stderr-tail.js";

async function feed(tail: StderrTail, chunks: (string | Buffer)[]): Promise<void> {
  const stream = new PassThrough();
  const done = tail.follow(stream);
  for (const chunk of chunks) stream.write(chunk);
  stream.end();
  await done;
}

describe("StderrTail", () => {
  test.each([
    ["keeps the last N lines", 3, ["a\nb\nc\n", "d\ne\n"], ["c", "d", "e"]],
    ["joins lines split across chunks", 5, ["hel", "lo wo", "rld\nnext"], ["hello world", "next"]],
    ["handles CRLF and skips blank lines", 5, ["one\r\n\r\n  \ntwo\r\n"], ["one", "two"]],
    ["decodes UTF-8 split inside a character", 5, [Buffer.from([0xc3]), Buffer.from([0xa9, 0x0a])], ["é"]],
    ["keeps nothing with maxLines 0", 0, ["a\nb\n"], []],
  ])("%s", async (_name, maxLines, chunks, expected) => {
    const tail = new StderrTail(maxLines);
    await feed(tail, chunks);
    expect(tail.lines()).toEqual(expected);
  });

  test("shows a line without newline while the stream is still open", () => {
    const tail = new StderrTail(5);
    const stream = new PassThrough();
    void tail.follow(stream);
    stream.write("first\npartial crash mess");
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        expect(tail.lines()).toEqual(["first", "partial crash mess"]);
        resolve();
      }),
    );
  });

  test("spans restarts: the next stream appends to the lines of the previous one", async () => {
    const tail = new StderrTail(3);
    await feed(tail, ["crash: out of memory"]);
    await feed(tail, ["starting again\n"]);
    expect(tail.lines()).toEqual(["crash: out of memory", "starting again"]);
  });

  test("clips a runaway line", async () => {
    const tail = new StderrTail(2);
    await feed(tail, ["x".repeat(5_000)]);
    const [line] = tail.lines();
    expect(line?.length).toBe(1_001);
    expect(line?.endsWith("…")).toBe(true);
  });

  test("the follow promise resolves when the stream fails", async () => {
    const tail = new StderrTail(2);
    const stream = new PassThrough();
    const done = tail.follow(stream);
    stream.write("before failure\n");
    stream.destroy(new Error("pipe broke"));
    await done;
    expect(tail.lines()).toEqual(["before failure"]);
  });
});
