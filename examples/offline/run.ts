/**
 * Runs another example offline: starts the stand-in PubMed and UniProt (./providers.ts), then the example in
 * its own Node process with `SCIENCEGATE_PUBMED_*` and `SCIENCEGATE_UNIPROT_*` pointing at them.
 * `npx tsx examples/offline/run.ts examples/quick-start.ts`; exits with the example's exit code.
 */
import { spawn } from "node:child_process";
import { startOfflineProviders } from "./providers.js";

const [example, ...args] = process.argv.slice(2);
if (!example) {
  console.error("usage: tsx examples/offline/run.ts <example.ts> [args…]");
  process.exit(2);
}
const providers = await startOfflineProviders();
const child = spawn(process.execPath, ["--import", "tsx", example, ...args], {
  env: { ...process.env, ...providers.env },
  stdio: "inherit",
});
const code = await new Promise<number>((done) => child.on("close", (status) => done(status ?? 1)));
await providers.server.close();
process.exit(code);
