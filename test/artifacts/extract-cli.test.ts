import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { runCli, tempDir } from "../cli/cli-harness.js";
import { makePdf, textPages } from "../fixtures/pdf/make-pdf.js";

describe("sciencegate extract", () => {
  test("--json extracts into ./<name>-extracted by default and prints the result", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "paper.pdf"), makePdf([...textPages(2), []]));
    const run = await runCli(["extract", "paper.pdf", "--json"], {}, dir);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({
      textPath: join(dir, "paper-extracted", "fulltext.md"),
      manifestPath: join(dir, "paper-extracted", "manifest.json"),
      pageCount: 3,
    });
    expect(result.warnings).toEqual([expect.stringContaining("page 3")]);
    expect(readFileSync(result.textPath, "utf8")).toContain("## Page 2\n\nPage 2 line 1");
  });

  test("--out chooses the folder; the text output lists the paths and warnings", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "scan.pdf"), makePdf([[], ["Caption only."]]));
    const run = await runCli(["extract", "scan.pdf", "--out", "custom"], {}, dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Extracted 2 pages of scan.pdf");
    expect(run.stdout).toContain(join(dir, "custom", "manifest.json"));
    expect(run.stdout).toMatch(/warning: .*page 1\./);
    expect(existsSync(join(dir, "custom", "fulltext.md"))).toBe(true);
  });

  test.each([
    [["extract"], 2, "name exactly one PDF"],
    [["extract", "a.pdf", "b.pdf"], 2, "name exactly one PDF"],
  ])("usage errors: %j exits %i", async (argv, code, message) => {
    const run = await runCli(argv);
    expect(run.code).toBe(code);
    expect(run.stderr).toContain(message);
  });

  test("a non-PDF exits 1 with the INVALID_INPUT code and writes nothing", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "page.pdf"), "<html>Access denied</html>");
    const run = await runCli(["extract", "page.pdf"], {}, dir);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/INVALID_INPUT: .*not a PDF/);
    expect(existsSync(join(dir, "page-extracted"))).toBe(false);
  });
});
