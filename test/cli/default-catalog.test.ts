import { describe, expect, test } from "vitest";
import { runCli } from "./cli-harness.js";

const SOURCES = [
  "arxiv",
  "biorxiv",
  "chembl",
  "clinvar",
  "ensembl",
  "europe-pmc",
  "geo",
  "llm-wiki",
  "medrxiv",
  "pdb",
  "pubmed",
  "reactome",
  "uniprot",
];

describe("sciencegate tools with the built-in default config", () => {
  test("shows the bundled servers connected and the twelve sources plus the LLM Wiki ready with every tool", async () => {
    const run = await runCli(["tools", "--json"]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      config: string;
      servers: { id: string; status: string }[];
      sources: {
        id: string;
        status: string;
        derived: boolean;
        missingTools: unknown[];
        availableTools: string[];
      }[];
      tools: { name: string }[];
    };
    expect(report.config).toBe("(built-in default)");
    expect(report.servers).toEqual([
      { id: "sciencegate-sources", transport: "stdio", status: "connected" },
      { id: "llm-wiki", transport: "stdio", status: "connected" },
    ]);
    expect(report.sources.map((s) => s.id).sort()).toEqual(SOURCES);
    for (const source of report.sources) {
      expect(source, source.id).toMatchObject({ status: "ready", derived: false, missingTools: [] });
    }
    expect(report.tools).toHaveLength(43);
    expect(report.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining([
        "mcp__pubmed__fetch_abstracts",
        "mcp__europe-pmc__search",
        "mcp__geo__list_files",
        "mcp__chembl__get_mechanisms",
      ]),
    );
  });
});
