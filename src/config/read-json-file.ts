/** Reads a JSON config file and turns every failure into an `INVALID_CONFIG` error that points at the spot. */
import { readFile } from "node:fs/promises";
import type { ConfigIssue } from "./config-issues.js";
import { configError } from "./config-issues.js";

/** The outcome of reading a config file that may legitimately be absent. */
export type JsonFileRead = { found: false } | { found: true; json: unknown };

/**
 * Reads and parses `path`. A missing file is not an error here: the caller knows whether it was named.
 * @param path absolute path of the file
 * @returns `{found: false}` when the file does not exist, else the parsed JSON
 * @throws GovernanceError `INVALID_CONFIG` when the file cannot be read or is not valid JSON (with line and
 *   column when the parser reports a position)
 */
export async function readJsonFile(path: string): Promise<JsonFileRead> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { found: false };
    const reason =
      code === "EISDIR"
        ? "the path is a directory, not a file. Point the config path at the JSON file itself."
        : `the file cannot be read (${(error as Error).message}). Check that it exists and is readable.`;
    throw configError(path, [{ path: "", message: reason }]);
  }
  // Editors on Windows may save a byte-order mark, which JSON.parse rejects.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return { found: true, json: JSON.parse(text) };
  } catch (error) {
    throw configError(path, [jsonSyntaxIssue(text, (error as Error).message)]);
  }
}

/**
 * Explains a `JSON.parse` failure with a line and column when its message has a position.
 * @param text the file contents
 * @param parserMessage the `SyntaxError` message
 * @returns an issue for the whole file
 */
export function jsonSyntaxIssue(text: string, parserMessage: string): ConfigIssue {
  if (text.trim() === "") {
    return {
      path: "",
      message: 'the file is empty, which is not valid JSON. Write {"mcpServers": {}} or delete the file.',
    };
  }
  const fix =
    "Fix the syntax there (a missing comma, quote or bracket, or a trailing comma, is the usual cause).";
  const reason = parserMessage
    .replace(/ in JSON at position \d+.*$/s, "")
    .replace(/, ".*" is not valid JSON$/s, "")
    .trim();
  const lineColumn = /line (\d+) column (\d+)/.exec(parserMessage);
  const position = /at position (\d+)/.exec(parserMessage);
  let where = "";
  if (lineColumn) where = ` at line ${lineColumn[1]}, column ${lineColumn[2]}`;
  else if (position) {
    const before = text.slice(0, Number(position[1]));
    const line = before.split("\n").length;
    const column = before.length - before.lastIndexOf("\n");
    where = ` at line ${line}, column ${column}`;
  }
  return { path: "", message: `the file is not valid JSON${where}: ${reason}. ${fix}` };
}
