/**
 * Text from a third party (a server's tool names, descriptions, errors and results, a ledger row, an
 * approval card's arguments) on a terminal: made inert, so that it cannot set the window title, clear
 * the screen, move the cursor, reorder what is shown (bidi overrides), or forge a line of its own.
 * Every CLI command prints its fields through {@link terminalLine}, and `main` writes through
 * {@link terminalIo}, which makes any escape that is still left visible.
 */

/** The two streams of a CLI run (`CliIo` has them). */
interface OutputStreams {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/**
 * What a terminal acts on, or what changes how a line reads: C0 controls (ESC starts every escape
 * sequence; CR returns to the line's start), DEL, C1 controls (CSI and OSC have one-byte forms), the
 * bidi controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) and the line separators
 * U+2028 and U+2029.
 */
const FIELD_CONTROLS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is made visible
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/** The same, except the line feed and the tab that the CLI's own formatting uses. */
const OUTPUT_CONTROLS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is made visible
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** The visible form of one control: `\n`, `\r`, `\t`, else `\uXXXX` (valid inside a JSON string too). */
function visible(char: string): string {
  return NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/**
 * One field of a line: every control character, line break and bidi control made visible (an escape
 * sequence shows as `\u001b[2J`, a line feed as `\n`), so the field stays on its line and does nothing.
 * @param text a third party's text
 * @returns the text, printable on one line
 * @example
 * terminalText("ok\u001b]0;pwned\u0007\nfake: line"); // "ok\\u001b]0;pwned\\u0007\\nfake: line"
 */
export function terminalText(text: string): string {
  return text.replace(FIELD_CONTROLS, visible);
}

/**
 * A message that may span lines (an error that lists problems): controls made visible as in
 * {@link terminalText}, except the line breaks, and each line after the first indented, so no part of
 * the message starts a line at the margin where the CLI's own lines start.
 * @param text the message
 * @returns the message, inert
 */
export function terminalBlock(text: string): string {
  return text
    .split(/\r\n|\n/)
    .map(terminalText)
    .join("\n  ");
}

/**
 * A tagged template for a line of CLI output: the template's own text is kept, and each value is
 * printed with {@link terminalText}, whatever it holds.
 * @example
 * io.stdout(terminalLine`- candidate ${a.candidateId}: ${a.url}\n`);
 */
export function terminalLine(strings: TemplateStringsArray, ...values: unknown[]): string {
  let out = strings[0] ?? "";
  values.forEach((value, i) => {
    out += terminalText(String(value)) + (strings[i + 1] ?? "");
  });
  return out;
}

/**
 * The CLI's streams with every control character that is not a line feed or a tab made visible before
 * it is written: the last guard behind {@link terminalLine}. JSON output is unchanged in meaning, since
 * JSON has no raw controls outside its strings and `\uXXXX` is a JSON escape inside them.
 * @param io the streams to guard
 * @returns the same io with guarded `stdout` and `stderr`
 */
export function terminalIo<T extends OutputStreams>(io: T): T {
  const guard = (write: (text: string) => void) => (text: string) => write(terminalOutput(text));
  return { ...io, stdout: guard(io.stdout), stderr: guard(io.stderr) };
}

/**
 * Output already laid out in lines: every control character but the line feed and the tab made
 * visible, as {@link terminalIo} writes it.
 * @param text the output
 * @returns the output, inert
 */
export function terminalOutput(text: string): string {
  return text.replace(OUTPUT_CONTROLS, visible);
}

let isStderrGuarded = false;

/**
 * Guards the process's own stderr as {@link terminalIo} guards the CLI's: a message a library part
 * writes straight to `process.stderr` (a gateway's or a console's failure, a start-up warning) goes
 * through {@link terminalOutput} too. Called once, by `processIo`: only the `sciencegate` process owns
 * its terminal; an app that embeds Sciencegate keeps its stderr as it is.
 */
export function guardProcessStderr(): void {
  if (isStderrGuarded) return;
  isStderrGuarded = true;
  const write = process.stderr.write.bind(process.stderr) as (chunk: unknown, ...rest: unknown[]) => boolean;
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) =>
    write(typeof chunk === "string" ? terminalOutput(chunk) : chunk, ...rest)) as typeof process.stderr.write;
}
