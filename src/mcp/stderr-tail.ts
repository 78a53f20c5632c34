/** A rolling buffer of the last lines that a server process wrote to stderr. */
import type { Stream } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { redactUrls } from "../core/index.js";

/** Longer lines are cut: one runaway line must not fill memory or an error message. */
const MAX_LINE_CHARS = 1_000;

/**
 * Keeps the last `maxLines` non-blank lines written to one or more stderr streams, so that a server that
 * fails to start or dies can be explained with its own words. One tail spans every process of a server
 * (restarts append), which keeps a crash's output visible after the restart.
 * @example
 * const tail = new StderrTail(20);
 * void tail.follow(transport.stderr);
 * tail.lines(); // ["Error: missing API key"]
 */
export class StderrTail {
  readonly #maxLines: number;
  #lines: string[] = [];
  #partial = "";

  /**
   * @param maxLines how many lines to keep @default 20
   */
  constructor(maxLines = 20) {
    this.#maxLines = Math.max(0, Math.floor(maxLines));
  }

  /**
   * Starts reading `stream`; any unfinished line of the previous stream is kept as a line of its own.
   * @param stream a readable stderr stream (a child's stderr or the SDK's PassThrough)
   * @returns a promise that resolves once the stream has ended, closed or failed (never rejects)
   */
  follow(stream: Stream): Promise<void> {
    this.#flushPartial();
    const decoder = new StringDecoder("utf8");
    return new Promise<void>((resolve) => {
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        this.#append(decoder.end());
        this.#flushPartial();
        resolve();
      };
      stream.on("data", (chunk: Buffer | string) => {
        if (!finished) this.#append(typeof chunk === "string" ? chunk : decoder.write(chunk));
      });
      stream.once("end", finish);
      stream.once("close", finish);
      stream.once("error", finish);
    });
  }

  /**
   * The kept lines, oldest first, including a last line that has no newline yet.
   * @returns a copy of at most `maxLines` lines
   */
  lines(): string[] {
    const partial = this.#partial.trim() === "" ? [] : [clip(this.#partial)];
    const all = [...this.#lines, ...partial];
    return this.#maxLines === 0 ? [] : all.slice(-this.#maxLines);
  }

  #append(text: string): void {
    if (text === "") return;
    const parts = (this.#partial + text).split(/\r?\n/);
    this.#partial = parts.pop() ?? "";
    // An endless line without newline is clipped now rather than buffered without bound.
    if (this.#partial.length > MAX_LINE_CHARS * 2) this.#partial = this.#partial.slice(0, MAX_LINE_CHARS * 2);
    for (const line of parts) this.#push(line);
  }

  #flushPartial(): void {
    const rest = this.#partial;
    this.#partial = "";
    this.#push(rest);
  }

  #push(line: string): void {
    if (line.trim() === "") return;
    this.#lines.push(clip(line));
    if (this.#lines.length > this.#maxLines) this.#lines.splice(0, this.#lines.length - this.#maxLines);
  }
}

/** Clips a line and masks the secrets of any URL in it: the tail is quoted in errors, rows and the CLI. */
function clip(line: string): string {
  const redacted = redactUrls(line);
  return redacted.length > MAX_LINE_CHARS ? `${redacted.slice(0, MAX_LINE_CHARS)}…` : redacted;
}
