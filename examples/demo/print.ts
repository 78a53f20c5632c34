/** Output helpers of the demo: numbered steps, indented facts, short ids and compact arguments. */

/**
 * Bold text in a terminal, plain text otherwise (so logs and tests read the same words).
 * @param text the text
 * @returns the text, wrapped in ANSI bold when stdout is a TTY
 */
export const bold = (text: string): string => (process.stdout.isTTY ? `\x1b[1m${text}\x1b[0m` : text);

/**
 * Prints a numbered step title after a blank line.
 * @param n the step number
 * @param title what the step shows
 */
export function step(n: number, title: string): void {
  console.log(`\n${bold(`${n}. ${title}`)}`);
}

/**
 * The first 8 characters of an id, enough to tell ids apart on screen.
 * @param id an invocation, job or plan id
 * @returns the prefix followed by an ellipsis
 */
export function shortId(id: string): string {
  return id.length > 10 ? `${id.slice(0, 8)}…` : id;
}

/**
 * Tool-call arguments as `key=value` pairs: long strings and ids shortened, no JSON dump.
 * @param args the call's arguments
 * @returns one line
 */
export function formatArgs(args: Record<string, unknown>): string {
  return Object.entries(args)
    .map(([key, value]) => {
      let text = typeof value === "string" ? value : JSON.stringify(value);
      if (/Id$/.test(key) && typeof value === "string" && /^[0-9a-f-]{32,}$/i.test(value))
        text = shortId(value);
      else if (text.length > 60) text = `${text.slice(0, 57)}…`;
      return `${key}=${text}`;
    })
    .join(" ");
}

/**
 * A byte count for people.
 * @param bytes the count
 * @returns e.g. `2,318 B`
 */
export function formatBytes(bytes: number): string {
  return `${bytes.toLocaleString("en-US")} B`;
}
