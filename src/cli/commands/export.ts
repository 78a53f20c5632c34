import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { exportResearchObject, writeResearchObject } from "../../research-object/index.js";
import type { CliIo, ExitCode } from "../io.js";
import type { CliRuntime } from "../runtime.js";

/**
 * `sciencegate export`: one session (or thread) as a research object (RO-Crate) in a folder or a zip.
 * @returns 0 once written; a session without calls is `NOT_FOUND` (exit 1, from the caller)
 */
export async function exportCommand(
  runtime: CliRuntime,
  io: CliIo,
  options: {
    session: string;
    thread?: string | undefined;
    answer?: string | undefined;
    out: string;
    json: boolean;
  },
): Promise<ExitCode> {
  const answer =
    options.answer === undefined ? undefined : await readFile(resolve(io.cwd, options.answer), "utf8");
  const crate = await exportResearchObject({
    governance: runtime,
    sessionId: options.session,
    threadId: options.thread,
    answer,
  });
  const written = await writeResearchObject(crate, resolve(io.cwd, options.out));
  if (options.json) {
    io.stdout(`${JSON.stringify({ ...written, summary: crate.summary }, null, 2)}\n`);
    return 0;
  }
  const { summary } = crate;
  io.stdout(
    `Research object of session ${summary.sessionId}${summary.threadId ? ` (thread ${summary.threadId})` : ""}: ` +
      `${summary.invocations} call(s), ${summary.authorizations} authorization(s), ${summary.copied} file(s) copied, ` +
      `${summary.referencedOnly} referenced only` +
      (answer === undefined ? "" : `, ${summary.acceptedFacts} of ${summary.facts} fact(s) accepted`) +
      `\n  ${written.path} (${written.files} files, ${written.bytes} bytes)\n` +
      `  check it with: sciencegate verify-crate ${written.path}\n`,
  );
  return 0;
}
