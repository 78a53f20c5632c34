/**
 * The descendants of a stdio server's process. A server launched through a wrapper (`npx`, `uvx`, a
 * shell script) runs as a grandchild; killing only the direct child would leave it running, adopted
 * by init. Linux exposes parent pids under `/proc`; elsewhere the list is empty and only the direct
 * child is signalled.
 */
import { readdirSync, readFileSync } from "node:fs";

/**
 * Every live descendant of `pid` (children, grandchildren, …), read from `/proc` now.
 * @param pid the root process
 * @returns their pids, nearest first; `[]` where `/proc` is unavailable
 */
export function descendantPids(pid: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = parentPid(entry);
    if (parent === undefined) continue;
    const list = children.get(parent) ?? [];
    list.push(Number(entry));
    children.set(parent, list);
  }
  const found: number[] = [];
  const queue = [...(children.get(pid) ?? [])];
  while (queue.length > 0) {
    const next = queue.shift() as number;
    found.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return found;
}

/** The parent pid from `/proc/<pid>/stat` (field 4, after the command name, which may hold spaces). */
function parentPid(pid: string): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ppid = Number(fields[1]);
    return Number.isSafeInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined; // the process ended meanwhile
  }
}

/**
 * Whether a process exists (signal 0 probes without signalling; EPERM means it exists).
 * @param pid process id
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
