import { tmpdir } from "node:os";
import { basename, dirname } from "node:path";
import { expect, test } from "vitest";

test("a test run's temp folders live under the run's own folder, which the run removes", () => {
  expect(basename(tmpdir())).toMatch(/^sciencegate-test-run-/);
  expect(process.env.TMPDIR).toBe(tmpdir());
  expect(dirname(tmpdir())).not.toBe(tmpdir());
});
