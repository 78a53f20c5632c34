/** Which files this process holds open, read from /proc (Linux only). */
import { existsSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";

/** Whether {@link openFilesUnder} can see anything on this platform. */
export const canListOpenFiles = existsSync("/proc/self/fd");

/**
 * Files under `dir` that this process holds open (an SQLite database keeps its file open).
 * @param dir an absolute directory
 */
export function openFilesUnder(dir: string): string[] {
  return readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      const target = readlinkSync(join("/proc/self/fd", fd));
      return target.startsWith(dir) ? [target] : [];
    } catch {
      return [];
    }
  });
}
