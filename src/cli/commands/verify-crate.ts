import { resolve } from "node:path";
import { isGovernanceError } from "../../core/index.js";
import { verifyResearchObject } from "../../research-object/index.js";
import type { CliIo, ExitCode } from "../io.js";

/**
 * `sciencegate verify-crate PATH`: re-hashes every file of a research object, resolves every reference
 * and runs the claim review again from the crate alone.
 * @returns 0 when it verifies, 1 when a problem was found (each printed with what it breaks), 2 when
 *   PATH is not a readable crate
 */
export async function verifyCrateCommand(
  io: CliIo,
  options: { path: string; json: boolean },
): Promise<ExitCode> {
  let report: Awaited<ReturnType<typeof verifyResearchObject>>;
  try {
    report = await verifyResearchObject(resolve(io.cwd, options.path));
  } catch (error) {
    if (isGovernanceError(error) && (error.code === "NOT_FOUND" || error.code === "INVALID_INPUT")) {
      io.stderr(`sciencegate verify-crate: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  if (options.json) {
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    return report.ok ? 0 : 1;
  }
  for (const problem of report.problems) {
    io.stdout(`${problem.code}: ${printable(problem.message)}\n`);
    if (problem.breaks.length > 0) io.stdout(`  breaks: ${printable(problem.breaks.join(", "))}\n`);
  }
  const review = report.review
    ? `; review from the crate: ${report.review.accepted} of ${report.review.facts} fact(s) accepted, ` +
      (report.review.sameAsExport ? "as at export" : "NOT as at export")
    : "; no answer to review";
  io.stdout(
    `${report.ok ? "verified" : `FAILED (${report.problems.length} problem(s))`}: ${report.checkedFiles} file(s) re-hashed, ` +
      `${report.entities} entities, ${report.invocations} call(s)${review}\n`,
  );
  return report.ok ? 0 : 1;
}

/** C0 and C1 control characters (built from code points, which keeps the pattern readable). */
const CONTROL = new RegExp(
  `[${String.fromCharCode(0)}-${String.fromCharCode(0x1f)}${String.fromCharCode(0x7f)}-${String.fromCharCode(0x9f)}]`,
  "g",
);

/** A crate's text (third-party) with control characters made visible, so it cannot drive the terminal. */
function printable(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
