import { mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, test } from "vitest";
import { paperTextPath, readPaperManifest, readPaperText } from "../../src/artifacts/paper-text.js";

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

describe("readPaperManifest", () => {
  const manifest = {
    schemaVersion: 1,
    parser: "pdftotext 24.02.0",
    inputSha256: "0".repeat(64),
    pdfBytes: 1000,
    pageCount: 2,
    textCharacters: 12,
    pages: [
      { page: 1, textCharacters: 12, needsVision: false },
      { page: 2, textCharacters: 0, needsVision: true },
    ],
    limits: {},
    warnings: ["1 of 2 pages have no extractable text and need vision: page 2."],
  };
  const withManifest = (content: string) => {
    const dataDir = dataDirWith("t");
    writeFileSync(join(dataDir, "papers", "job-1", "manifest.json"), content);
    return dataDir;
  };

  test("reads papers/<jobId>/manifest.json", async () => {
    expect(await readPaperManifest(withManifest(JSON.stringify(manifest)), "job-1")).toEqual(manifest);
  });

  test.each([
    ["not JSON", "{"],
    ["no pages", JSON.stringify({ ...manifest, pages: undefined })],
    ["a page without needsVision", JSON.stringify({ ...manifest, pages: [{ page: 1, textCharacters: 3 }] })],
  ])("a file that is not a manifest (%s) is INVALID_INPUT", async (_label, content) => {
    await expect(readPaperManifest(withManifest(content), "job-1")).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining("is not an extraction manifest"),
    });
  });

  test("a job id that is not one plain name, a missing manifest and a manifest that is a link are refused", async () => {
    const dataDir = dataDirWith("t");
    await expect(readPaperManifest(dataDir, "../job-1")).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(readPaperManifest(dataDir, "job-1")).rejects.toMatchObject({ code: "NOT_FOUND" });
    const elsewhere = join(mkdtempSync(join(tmpdir(), "sciencegate-manifest-elsewhere-")), "manifest.json");
    writeFileSync(elsewhere, JSON.stringify(manifest));
    symlinkSync(elsewhere, join(dataDir, "papers", "job-1", "manifest.json"));
    await expect(readPaperManifest(dataDir, "job-1")).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining("manifest.json is a symbolic link"),
    });
  });

  test("a manifest over 4 MiB is RESPONSE_TOO_LARGE, not read", async () => {
    const dataDir = withManifest(" ".repeat(4 * 1024 * 1024 + 1));
    await expect(readPaperManifest(dataDir, "job-1")).rejects.toMatchObject({
      code: "RESPONSE_TOO_LARGE",
      data: { limit: "manifestBytes", max: 4 * 1024 * 1024 },
    });
  });
});
