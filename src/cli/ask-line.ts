/** Reading one valid answer from a line-based input (a terminal, or a pipe in tests). */
import { createInterface } from "node:readline";

/**
 * Reads lines until `parse` accepts one. End of input settles with `onEnd` (for approvals: deny, so
 * nothing runs unless a human said so).
 * @param input the stream to read
 * @param parse the answer of a line, or `undefined` to ask again
 * @param options `retry` is called after each invalid line; `onEnd` is the answer at end of input
 * @returns the first valid answer
 */
export function askLine<T>(
  input: NodeJS.ReadableStream,
  parse: (line: string) => T | undefined,
  options: { retry: () => void; onEnd: T },
): Promise<T> {
  const rl = createInterface({ input, terminal: false });
  return new Promise<T>((resolve) => {
    let settled = false;
    const finish = (answer: T) => {
      if (settled) return;
      settled = true;
      rl.close();
      resolve(answer);
    };
    rl.on("line", (line) => {
      const answer = parse(line);
      if (answer !== undefined) finish(answer);
      else options.retry();
    });
    rl.on("close", () => finish(options.onEnd));
  });
}
