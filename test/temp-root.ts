/**
 * Vitest global setup: every temp folder a test run makes (`os.tmpdir()` in tests, in the processes
 * they start, in embedded PostgreSQL) goes under one folder of the run, removed when the run ends,
 * so a run leaves nothing in the system's temp folder even where a test does not clean up after itself.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const previous = process.env.TMPDIR;
  const root = mkdtempSync(join(tmpdir(), "sciencegate-test-run-"));
  // Servers that run as another user (embedded PostgreSQL as root starts as `postgres`) must reach it.
  chmodSync(root, 0o755);
  // Workers start after this and inherit the environment: their os.tmpdir() is the run's folder.
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(root, { recursive: true, force: true });
  };
}
