import { randomBytes } from "node:crypto";
import { rename, rm, writeFile } from "node:fs/promises";

/**
 * Writes a file so readers see either the old content or the whole new content, never a part:
 * a temp file in the same folder, then `rename` (atomic on one file system).
 * @param path the final path
 * @param content the text to write
 * @returns when the file is in place
 * @throws the file system's error (the temp file is removed)
 */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(temp, content, { flag: "wx" });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
