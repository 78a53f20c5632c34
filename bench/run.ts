/**
 * Runs every `bench/*.bench.ts` module in turn (or only those whose file name contains one of the
 * command-line arguments), prints each result and merges them into `bench/results.json`.
 * Exits non-zero only when a benchmark throws: timings are reported, never judged.
 *
 * Usage: `npm run bench` or `npm run bench -- broker`
 */
import { readdir } from "node:fs/promises";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BenchModule } from "./lib/bench-result.js";
import { formatResult } from "./lib/format-result.js";
import { mergeResultsFile, type StoredBenchResult } from "./lib/results-file.js";

const benchDir = dirname(fileURLToPath(import.meta.url));
const resultsPath = join(benchDir, "results.json");

async function benchFiles(filters: readonly string[]): Promise<string[]> {
  const files = (await readdir(benchDir)).filter((f) => f.endsWith(".bench.ts")).sort();
  return filters.length === 0 ? files : files.filter((f) => filters.some((part) => f.includes(part)));
}

function isBenchModule(value: unknown): value is BenchModule {
  return typeof (value as { run?: unknown } | null)?.run === "function";
}

async function main(): Promise<number> {
  const files = await benchFiles(process.argv.slice(2));
  if (files.length === 0) {
    console.error(`No bench/*.bench.ts matches ${process.argv.slice(2).join(", ")}.`);
    return 1;
  }
  const cpuList = cpus();
  const machine = {
    node: process.version,
    cpus: cpuList.length,
    cpuModel: cpuList[0]?.model.trim() ?? "unknown",
    platform: `${process.platform}-${process.arch}`,
  };
  console.log(`node ${machine.node}, ${machine.cpus} x ${machine.cpuModel}, ${machine.platform}\n`);
  const stored: StoredBenchResult[] = [];
  let failed = 0;
  for (const file of files) {
    try {
      const module: unknown = await import(pathToFileURL(join(benchDir, file)).href);
      if (!isBenchModule(module)) throw new Error(`${file} does not export "async function run()".`);
      const result = await module.run();
      console.log(formatResult(result));
      stored.push({ ...result, date: new Date().toISOString(), ...machine });
    } catch (error) {
      failed++;
      console.error(`!! ${file} threw:`, error);
    }
  }
  if (stored.length > 0) {
    await mergeResultsFile(resultsPath, stored);
    console.log(`Wrote ${stored.map((s) => s.name).join(", ")} to ${resultsPath}`);
  }
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main();
