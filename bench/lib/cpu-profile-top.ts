/**
 * Reads the newest `.cpuprofile` in a folder (what `node --cpu-prof` writes) and prints the functions
 * with the most self time, and the self time per source file (node_modules grouped by package).
 *
 * Usage: `tsx bench/lib/cpu-profile-top.ts DIR|FILE [N]` (a folder: its newest profile). `PROFILE_CALLERS=run,get` also prints, for each named
 * function, its self time split by the stack of callers above it (the five nearest non-native frames), to
 * tell which statement of which module a native frame belongs to (`PROFILE_DEPTH=N` frames, default 5);
 * `PROFILE_TOTAL=gateway/` prints the functions whose location contains that text by total time. A `window.json` in the folder
 * (`{ fromUs, toUs, calls }`, written by `bench/profile-gateway.ts`) limits the count to the samples in
 * that span of V8's clock and adds the time per call.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

function newest(dir: string): string {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile"))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (files.length === 0) throw new Error(`No .cpuprofile in ${dir}.`);
  return files[0] as string;
}

/** A short location: the path under the repository or the package under node_modules. */
function where(url: string): string {
  if (url === "") return "(native)";
  const modules = url.lastIndexOf("node_modules/");
  if (modules >= 0) {
    const rest = url.slice(modules + "node_modules/".length).split("/");
    return `npm:${rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  const repo = url.indexOf("/src/") >= 0 ? url.indexOf("/src/") : url.indexOf("/bench/");
  return repo >= 0 ? url.slice(repo + 1) : url.replace(/^file:\/\//, "");
}

function top(map: Map<string, number>, n: number, total: number, calls?: number): string[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(
      ([name, us]) =>
        `${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms` +
        `${calls ? `  ${(us / calls).toFixed(1).padStart(6)} µs/call` : ""}  ${name}`,
    );
}

const arg = process.argv[2] ?? ".";
const n = Number(process.argv[3] ?? 30);
const path = arg.endsWith(".cpuprofile") ? arg : newest(arg);
const dir = dirname(path);
const profile = JSON.parse(readFileSync(path, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const windowFile = join(dir, "window.json");
const window = existsSync(windowFile)
  ? (JSON.parse(readFileSync(windowFile, "utf8")) as { fromUs: number; toUs: number; calls: number })
  : undefined;
if (window && (window.fromUs < profile.startTime || window.toUs > profile.endTime))
  throw new Error(`${windowFile} spans ${window.fromUs}..${window.toUs}, outside the profile's clock.`);
const selfUs = new Map<number, number>();
let at = profile.startTime;
profile.samples.forEach((id, i) => {
  at += profile.timeDeltas[i] ?? 0;
  if (window && (at < window.fromUs || at > window.toUs)) return;
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const calls = window?.calls;
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
let total = 0;
let idle = 0;
for (const [id, us] of selfUs) {
  const frame = (byId.get(id) as ProfileNode).callFrame;
  if (frame.functionName === "(idle)") {
    idle += us;
    continue;
  }
  total += us;
  const file = where(frame.url);
  const name = `${frame.functionName || "(anonymous)"}  ${file}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  byFile.set(file, (byFile.get(file) ?? 0) + us);
}
console.log(
  `${path}: ${(total / 1000).toFixed(0)} ms on CPU, ${(idle / 1000).toFixed(0)} ms idle` +
    `${calls ? ` over ${calls} calls (${(total / calls).toFixed(0)} µs on CPU per call)` : ""}\n`,
);
console.log(`Top ${n} functions by self time:`);
console.log(top(byFunction, n, total, calls).join("\n"));
console.log(`\nSelf time by file or package (top ${n}):`);
console.log(top(byFile, n, total, calls).join("\n"));

const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

// Total (inclusive) time of the functions whose location contains PROFILE_TOTAL (e.g. `gateway/`):
// each sample counts once for every distinct function on its stack.
const totalOf = process.env.PROFILE_TOTAL;
if (totalOf !== undefined) {
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    if ((byId.get(id) as ProfileNode).callFrame.functionName === "(idle)") continue;
    const seen = new Set<string>();
    for (let up: number | undefined = id; up !== undefined; up = parent.get(up)) {
      const frame = (byId.get(up) as ProfileNode).callFrame;
      const file = where(frame.url);
      if (!file.includes(totalOf)) continue;
      seen.add(`${frame.functionName || "(anonymous)"}  ${file}:${frame.lineNumber + 1}`);
    }
    for (const name of seen) inclusive.set(name, (inclusive.get(name) ?? 0) + us);
  }
  console.log(`\nTop ${n} functions in '${totalOf}' by total time (self and callees):`);
  console.log(top(inclusive, n, total, calls).join("\n"));
}

const DEPTH = Number(process.env.PROFILE_DEPTH ?? 5);
const callers = (process.env.PROFILE_CALLERS ?? "").split(",").filter((name) => name !== "");
if (callers.length > 0) {
  for (const wanted of callers) {
    const stacks = new Map<string, number>();
    for (const [id, us] of selfUs) {
      const frame = (byId.get(id) as ProfileNode).callFrame;
      if (frame.functionName !== wanted) continue;
      const chain: string[] = [];
      for (let at = parent.get(id); at !== undefined && chain.length < DEPTH; at = parent.get(at)) {
        const up = (byId.get(at) as ProfileNode).callFrame;
        if (up.url === "") continue;
        chain.push(`${up.functionName || "(anonymous)"}@${where(up.url)}:${up.lineNumber + 1}`);
      }
      const key = chain.join(" < ");
      stacks.set(key, (stacks.get(key) ?? 0) + us);
    }
    console.log(`\nCallers of ${wanted} (self time by caller stack):`);
    console.log(top(stacks, 10, total, calls).join("\n"));
  }
}
