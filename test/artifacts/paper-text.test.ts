import { mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, test } from "vitest";
import { paperTextPath, readPaperText } from "../../src/artifacts/paper-text.js";

/** A data directory holding the extraction of job `job-1` with `text`. */
function dataDirWith(text: string): string {
  const dataDir = mkdtempSync(join(tmpdir(), "sciencegate-paper-text-"));
  const path = paperTextPath(dataDir, "job-1");
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return dataDir;
}

describe("readPaperText", () => {
  test("reads papers/<jobId>/fulltext.md, also when the data directory itself is reached through a link", async () => {
    const dataDir = dataDirWith("## Page 1\n\nRésumé of the paper\n");
    expect(paperTextPath(dataDir, "job-1")).toBe(join(dataDir, "papers", "job-1", "fulltext.md"));
    expect(await readPaperText(dataDir, "job-1")).toBe("## Page 1\n\nRésumé of the paper\n");
    const linked = join(mkdtempSync(join(tmpdir(), "sciencegate-paper-link-")), "data");
    symlinkSync(dataDir, linked);
    expect(await readPaperText(linked, "job-1")).toContain("Résumé");
  });

  test("a text over the bound of its character limit is RESPONSE_TOO_LARGE, not read", async () => {
    // 3 bytes per character plus 64 KiB for the page headings.
    const dataDir = dataDirWith("x".repeat(3 * 10 + 64 * 1024 + 1));
    await expect(readPaperText(dataDir, "job-1", { maxCharacters: 10 })).rejects.toMatchObject({
      code: "RESPONSE_TOO_LARGE",
      data: { limit: "maxCharacters", max: 3 * 10 + 64 * 1024 },
    });
    expect(await readPaperText(dataDir, "job-1", { maxCharacters: 11 })).toHaveLength(3 * 10 + 64 * 1024 + 1);
  });

  test.each([["../job-1"], ["job-1/../../x"], [".."], [""], ["a/b"]])(
    "the job id %j is not one plain name: INVALID_INPUT",
    async (jobId) => {
      await expect(readPaperText(dataDirWith("t"), jobId)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    },
  );

  test("no extraction is NOT_FOUND", async () => {
    await expect(readPaperText(dataDirWith("t"), "job-2")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  test("a papers folder that is a link is refused", async () => {
    const dataDir = dataDirWith("t");
    const elsewhere = mkdtempSync(join(tmpdir(), "sciencegate-paper-elsewhere-"));
    renameSync(join(dataDir, "papers"), join(elsewhere, "papers"));
    symlinkSync(join(elsewhere, "papers"), join(dataDir, "papers"));
    await expect(readPaperText(dataDir, "job-1")).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining("is a symbolic link"),
    });
  });
});
