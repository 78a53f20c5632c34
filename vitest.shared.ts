import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * `sciencegate` and its subpaths resolve to their entry files in src/, as tsconfig.json's `paths` map
 * them for the type checker and tsx: tests and examples import the package by name, never a stale dist/.
 */
export function packageAliases(): { find: RegExp; replacement: string }[] {
  const tsconfig = JSON.parse(readFileSync(new URL("./tsconfig.json", import.meta.url), "utf8")) as {
    compilerOptions: { paths: Record<string, string[]> };
  };
  return Object.entries(tsconfig.compilerOptions.paths).map(([name, [target]]) => ({
    find: new RegExp(`^${name.replace("/", "\\/")}$`),
    replacement: fileURLToPath(new URL(target ?? "", import.meta.url)),
  }));
}
