import { describe, expect, test } from "vitest";
import { runNodeScript } from "./run-node-script.js";

/** Runs an example as a user would (`npx tsx <file>`). */
const runExample = (file: string) => runNodeScript([file]);

describe("one approval example per executor, offline", () => {
  test.each([
    "examples/approvals/state-graph.ts",
    "examples/approvals/create-agent.ts",
    "examples/approvals/swarm.ts",
    "examples/approvals/tool-node.ts",
  ])(
    "%s: two PubMed cards, one allowed once and run, one denied; UniProt runs unasked",
    async (file) => {
      const { code, stdout, stderr } = await runExample(file);
      expect(stderr).not.toMatch(/Error/);
      expect(code).toBe(0);
      expect(stdout).toContain("2 approval card(s) waiting");
      expect(stdout).toMatch(/- Search PubMed for "BRAF V600E melanoma".* -> allow once/);
      expect(stdout).toMatch(/- Search PubMed for "BRAF inhibitor resistance".* -> deny/);
      expect(stdout).toContain("answer: Here is what the approved searches found.");
      const ledger = stdout
        .split("\n")
        .filter((line) => line.startsWith("ledger: "))
        .sort();
      expect(ledger).toEqual([
        "ledger: pubmed-1 pubmed/search ok",
        "ledger: pubmed-2 pubmed/search error PERMISSION_DENIED",
        "ledger: uniprot-1 uniprot/search ok",
      ]);
    },
    120_000,
  );

  test("examples/approval-loop.ts (createGovernedAgent): the matching grant releases the second card", async () => {
    const { code, stdout } = await runExample("examples/approval-loop.ts");
    expect(code).toBe(0);
    expect(stdout).toContain("2 approval card(s) waiting");
    expect(stdout).toContain("-> allow_matching");
    const line = stdout.split("\n").find((l) => l.startsWith("authorizations: ")) ?? "";
    // One human decision (a grant), the sibling released by it, and UniProt's safe search.
    expect(line.slice("authorizations: ".length).split(", ").sort()).toEqual([
      "search:existing_grant",
      "search:policy_not_dangerous",
      "search:user_grant",
    ]);
  }, 120_000);
});
