/**
 * What the approval tests over a real filesystem server share inside vitest: runtimes closed after each
 * test, the three files the scripted model writes, and a file-existence check.
 */
import { access } from "node:fs/promises";
import { afterEach } from "vitest";
import type { Governance } from "../../src/runtime/create-governance.js";
import { filesystemGovernance } from "./filesystem-executors.js";

/** The files the scripted writer model writes, in its call order (`write-1` … `write-3`). */
export const FILES = ["a.txt", "b.txt", "c.txt"] as const;

/** Whether a file exists. */
export const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/**
 * Registers an `afterEach` that closes every runtime the returned function opened.
 * @returns a `filesystemGovernance` whose runtimes are closed after each test
 */
export function filesystemRuntimes(): typeof filesystemGovernance {
  const opened: Governance[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((g) => g.close()));
  });
  return async (options) => {
    const built = await filesystemGovernance(options);
    opened.push(built.governance);
    return built;
  };
}
