/**
 * The reliability suite's summary: each fault test runs through {@link faultTest}, which records what
 * was tried and whether the guarantee held (a failed assertion records "broke" and still fails the
 * test). Each file prints its table after its tests; `npm run test:faults` adds the slow scenarios.
 */
import { afterAll, test } from "vitest";

interface FaultRow {
  scenario: string;
  tried: string;
  held: boolean;
  observed: string;
}

const rows: FaultRow[] = [];

/**
 * A test of one fault scenario. `run` returns a short line of what was observed (numbers, not adjectives).
 * @param scenario the fault, e.g. "stdio server killed mid-call"
 * @param tried what was done to the system
 * @param run the test body; throws when the guarantee does not hold
 * @param timeoutMs vitest timeout
 */
export function faultTest(
  scenario: string,
  tried: string,
  run: () => Promise<string>,
  timeoutMs?: number,
): void {
  test(
    scenario,
    async () => {
      try {
        const observed = await run();
        rows.push({ scenario, tried, held: true, observed });
      } catch (error) {
        rows.push({
          scenario,
          tried,
          held: false,
          observed: error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error),
        });
        throw error;
      }
    },
    timeoutMs,
  );
}

/**
 * Prints this file's table after its tests.
 * @param title the table's heading
 */
export function printFaultSummary(title: string): void {
  afterAll(() => {
    if (rows.length === 0) return;
    const lines = [`\n${title}`, "| held | scenario | tried | observed |", "|---|---|---|---|"];
    for (const row of rows) {
      lines.push(`| ${row.held ? "yes" : "NO"} | ${row.scenario} | ${row.tried} | ${row.observed} |`);
    }
    console.log(lines.join("\n"));
  });
}
