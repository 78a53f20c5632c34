/** Splitting a `science.toml` `command = "..."` line into argv the way a POSIX shell would, without a shell. */
import { GovernanceError } from "../core/index.js";

/**
 * Splits a command line into words: whitespace separates words, `'…'` keeps everything literally,
 * `"…"` keeps everything but `\"`, `\\`, `\$` and `` \` `` escapes, and a backslash outside quotes
 * escapes the next character. No expansion, globbing, pipes or redirections happen (no shell runs).
 * Hand-written because no installed package splits with these semantics and nothing else.
 * @param line the command line, e.g. `uvx mcp-pubchem --db "my data"`
 * @returns the words, e.g. `["uvx", "mcp-pubchem", "--db", "my data"]`
 * @throws GovernanceError `INVALID_CONFIG` for an unterminated quote or a trailing backslash
 */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else word += ch;
      continue;
    }
    if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (ch === "\\" && i + 1 < line.length && '"\\$`'.includes(line[i + 1] as string)) {
        word += line[++i];
      } else word += ch;
      continue;
    }
    if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === "\\") {
      if (i + 1 >= line.length) throw unterminated(line, "a trailing backslash");
      word += line[++i];
      inWord = true;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (quote !== undefined) throw unterminated(line, `an unterminated ${quote} quote`);
  if (inWord) words.push(word);
  return words;
}

function unterminated(line: string, what: string): GovernanceError {
  return new GovernanceError(
    "INVALID_CONFIG",
    `The command ${JSON.stringify(line)} has ${what}; close the quote or remove the backslash.`,
  );
}
