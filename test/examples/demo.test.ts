import { readFileSync, rmSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { runNodeScript } from "./run-node-script.js";

const PROVIDER_VARS = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OLLAMA_BASE_URL", "SCIENCEGATE_DEMO_MODEL"];

/** Runs `examples/demo.ts` as `npm run demo` does, with stdin not a TTY. */
function runDemo(args: string[], env: NodeJS.ProcessEnv = process.env) {
  return runNodeScript(["examples/demo.ts", ...args], { env, timeoutMs: 60_000 });
}

function withoutProviders(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of PROVIDER_VARS) delete env[name];
  return env;
}

describe("npm run demo", () => {
  test("runs offline end to end and prints each step's key facts", { timeout: 70_000 }, async () => {
    const { code, stdout, stderr, ms } = await runDemo([], withoutProviders());
    const dataDir = /data in (\S+)/.exec(stdout)?.[1];
    try {
      expect(code, `${stdout}\n${stderr}`).toBe(0);
      expect(ms).toBeLessThan(60_000);
      // 1. the catalog; 9. the agent: promotion, tool_search, the parallel pair and the approval card
      expect(stdout).toMatch(/^ {2}pubmed\s+ready\s+\d+ tools/m);
      expect(stdout).toMatch(/auto-promote mcp__pubmed__search, mcp__europe-pmc__search/);
      expect(stdout).toMatch(/deferred prompt \(\d+ lines.*\n {4}\| <available-deferred-tools>\n/);
      expect(stdout).toContain("tool_search promoted mcp__arxiv__lookup, mcp__arxiv__prepare_paper_download");
      expect(stdout).toContain("2 calls in one turn (one task each, in parallel)");
      expect(stdout).toMatch(/approval card: Search Europe PMC for "crispr base editing"/);
      // ...and why: the demo's own policy, not Sciencegate's default (a public read asks nobody).
      expect(stdout).toMatch(
        /approval card: Search Europe PMC.*\n {4}asked because the app's own permission policy says so: this demo's permissionPolicy\.isDangerous marks every europe-pmc call dangerous/,
      );
      expect(stdout).toContain("→ allow_matching (the script's answer");
      // the search that finished before the pause is printed once, not again after the resume
      expect(stdout.split("← mcp__pubmed__search:")).toHaveLength(2);
      // the paper: candidate, download with streamed progress, extraction in the next turn
      expect(stdout).toContain(
        "candidate arxiv:2403.01234v2:pdf: paper pdf ← https://arxiv.org/pdf/2403.01234v2",
      );
      // the download asks first (file, source and destination on the card), then streams progress
      const downloadCard = stdout.indexOf('approval card: Download "2403.01234v2.pdf" from arXiv');
      expect(downloadCard).toBeGreaterThan(0);
      expect(stdout.slice(downloadCard)).toMatch(
        /^.*to downloads\/arxiv\/2403\.01234v2\.pdf.*\n {4}asked because downloads always need approval.*\n.*allow matching covers every download call on a resource starting with artifact:arxiv:, for the rest of this session\n.*→ allow_matching/,
      );
      expect(downloadCard).toBeLessThan(stdout.indexOf("⇣ progress"));
      const progress = stdout.split("\n").filter((line) => line.includes("⇣ progress"));
      expect(progress.filter((line) => / running [\d,]+ B/.test(line)).length).toBeGreaterThanOrEqual(2);
      expect(progress.at(-1)).toMatch(/completed [\d,]+ B/);
      expect(stdout).toMatch(/← artifact_download completed/);
      expect(stdout).toMatch(/← paper_extract_pdf: 4 pages extracted/);
      expect(stdout).toMatch(/warning: .*page 4/); // the figure page has no text
      const order = [
        "model → artifact_download",
        "← artifact_download completed",
        "model → paper_extract_pdf",
      ];
      const at = order.map((text) => stdout.indexOf(text));
      expect(at).toEqual([...at].sort((a, b) => a - b));
      const textPath = /fulltext\.md: (\S+)/.exec(stdout)?.[1] ?? "";
      expect(readFileSync(textPath, "utf8")).toMatch(/^## Page 1\n/);
      // the final answer cites every fact, and each citation is checked against the ledger
      expect(stdout).toMatch(/final answer:\n.*\[PMID:39000001\]/);
      expect(stdout).toMatch(/Its full text was read: 4 pages .*\[arXiv:2403\.01234v2\]/);
      expect(stdout).toContain(
        "citations checked: 4 facts, 4 citations, each from a governed invocation in the ledger",
      );
      expect(stdout).toMatch(
        /Its full text was read.*\n.*← arxiv\/lookup invocation .*\n\s+full text ← paper_extract_pdf invocation/,
      );
      expect(stdout).not.toContain("problem:");
      // 11. the ledger summary
      expect(stdout).toMatch(
        /\d+ calls: \d+ ok, \d+ errors, \d+ cache hits, queue wait \d+ ms, \d+ authorizations/,
      );
    } finally {
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test.concurrent("--live without a configured chat model exits 2 and explains the three options", async () => {
    const { code, stdout, stderr } = await runDemo(["--live", "BRAF V600E in melanoma?"], withoutProviders());
    expect(code).toBe(2);
    expect(stdout).toBe("");
    for (const option of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OLLAMA_BASE_URL"])
      expect(stderr).toContain(option);
  });

  test.concurrent("--live with a provider whose package is not installed names the npm install command", async () => {
    const { code, stderr } = await runDemo(["--live", "BRAF?"], {
      ...withoutProviders(),
      ANTHROPIC_API_KEY: "sk-ant-test",
    });
    expect(code).toBe(2);
    expect(stderr).toContain("npm install @langchain/anthropic");
  });
});
