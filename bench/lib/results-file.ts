/** `bench/results.json`: the latest result of every benchmark, merged by benchmark name. */
import { readFile, rename, writeFile } from "node:fs/promises";
import type { BenchResult } from "./bench-result.js";

/** One stored result with the machine it ran on. */
export interface StoredBenchResult extends BenchResult {
  /** ISO time the run finished. */
  date: string;
  node: string;
  cpus: number;
  cpuModel: string;
  platform: string;
}

/** The file's content: benchmark name -> latest stored result. */
export type BenchResultsFile = Record<string, StoredBenchResult>;

/**
 * Reads the results file.
 * @param path the file path
 * @returns its entries; `{}` when the file does not exist
 * @throws Error when the file exists but is not a JSON object (so a corrupt file is not overwritten silently)
 */
export async function readResultsFile(path: string): Promise<BenchResultsFile> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw error;
  }
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${path} is not a JSON object of benchmark results; fix or delete it.`);
  }
  return parsed as BenchResultsFile;
}

/**
 * Replaces the entries of the given benchmarks and keeps every other entry, written atomically.
 * @param path the file path
 * @param results the new results
 * @returns the merged content that was written
 * @throws Error when the existing file is not a JSON object
 */
export async function mergeResultsFile(
  path: string,
  results: readonly StoredBenchResult[],
): Promise<BenchResultsFile> {
  const merged = await readResultsFile(path);
  for (const result of results) merged[result.name] = result;
  const sorted = Object.fromEntries(Object.entries(merged).sort(([a], [b]) => a.localeCompare(b)));
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(sorted, null, 2)}\n`);
  await rename(temp, path);
  return sorted;
}
