#!/usr/bin/env node
// The `sciencegate` command. The compiled CLI lives in dist/ (built by `npm run build`, and by `npm pack`).
import { existsSync } from "node:fs";

const entry = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("sciencegate: dist/ is missing. Run `npm run build` in the package folder first.\n");
  process.exit(2);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
