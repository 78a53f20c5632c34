/**
 * Two builds of `sciencegate serve gateway --eager` side by side in one run: this checkout's `dist/`
 * and another's (`GATEWAY_AB_BASE=/path/to/checkout`, built), each over stdio and over Streamable HTTP,
 * an MCP SDK client calling the trivial `lookup` tool of `lib/user-servers.ts` through each in turn, in
 * alternating blocks, so that a shared machine's load falls on both alike. Prints, per transport, the
 * median over blocks of each build's p50 and of its gateway process's CPU per call (main thread, and
 * every thread; its children, the same trivial server, not counted), and this build / base. Not a
 * `*.bench.ts` (it needs a second checkout). `AB_BLOCKS` (default 10) blocks of `AB_BLOCK` (default
 * 200) calls per gateway; `AB_TRANSPORTS=stdio` or `=HTTP` runs one.
 *
 *   GATEWAY_AB_BASE=../base-checkout npx tsx bench/gateway-ab.ts
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { childCpu, cpuBetween } from "./lib/cpu-meter.js";
import { connectStdio, startUserServers } from "./lib/user-servers.js";

const BLOCKS = Number(process.env.AB_BLOCKS ?? 10);
const BLOCK = Number(process.env.AB_BLOCK ?? 200);
const WARMUP = 200;
const baseDir = process.env.GATEWAY_AB_BASE;
if (baseDir === undefined) throw new Error("Set GATEWAY_AB_BASE to the other checkout (built).");
const cli = {
  base: resolve(baseDir, "dist", "cli", "main.js"),
  this: fileURLToPath(new URL("../dist/cli/main.js", import.meta.url)),
};
for (const path of Object.values(cli))
  if (!existsSync(path)) throw new Error(`${path} is missing: build it.`);

interface Gateway {
  label: string;
  client: Client;
  pid: number;
  p50s: number[];
  mainMs: number[];
  processMs: number[];
  close(): Promise<void>;
}

const bench = await startUserServers("sciencegate-gateway-ab-", "ab-direct");
const { scratch, manifests, trivial } = bench;
const project = join(scratch, "project");
await mkdir(project);
const line = [trivial.command.command, ...trivial.command.args].map((w) => `'${w}'`).join(" ");
await writeFile(join(project, "science.toml"), `[tools.${trivial.serverId}]\ncommand = "${line}"\n`);
const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...trivial.env };
const args = (entry: string, extra: string[]) => [
  entry,
  "serve",
  "gateway",
  "--eager",
  "--config",
  join(project, "science.toml"),
  "--manifests",
  manifests,
  ...extra,
];

async function stdioGateway(build: "base" | "this"): Promise<Gateway> {
  const command = { command: process.execPath, args: args(cli[build], ["--session", "ab"]) };
  const home = join(scratch, `${build}-stdio`);
  const sdk = await connectStdio(`ab-${build}`, command, { ...env, SCIENCEGATE_HOME: home }, project);
  return { label: `stdio ${build}`, client: sdk.client, pid: sdk.pid, ...lists(), close: sdk.close };
}

async function httpGateway(build: "base" | "this"): Promise<Gateway> {
  const child: ChildProcess = spawn(process.execPath, args(cli[build], ["--http", "127.0.0.1:0"]), {
    env: { ...env, SCIENCEGATE_HOME: join(scratch, `${build}-http`) },
    cwd: project,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-4000);
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match) resolve(match[1] as string);
    });
    child.once("exit", (code) => reject(new Error(`The HTTP gateway exited (${code}): ${stderr}`)));
  });
  const client = new Client({ name: `ab-${build}`, version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const close = async () => {
    await client.close();
    if (child.exitCode !== null) return;
    await new Promise<void>((done) => {
      child.once("exit", () => done());
      child.kill("SIGTERM");
    });
  };
  return { label: `HTTP ${build}`, client, pid: child.pid as number, ...lists(), close };
}

function lists() {
  return { p50s: [] as number[], mainMs: [] as number[], processMs: [] as number[] };
}

let index = 0;
async function call(g: Gateway): Promise<number> {
  const i = index++;
  const start = performance.now();
  const result = (await g.client.callTool({
    name: trivial.modelName,
    arguments: trivial.args(i),
  })) as CallToolResult;
  const took = performance.now() - start;
  const [first] = result.content;
  if (result.isError || first?.type !== "text" || !first.text.includes(`"r${i}"`))
    throw new Error(`${g.label} answered ${JSON.stringify(result).slice(0, 300)}`);
  return took;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

async function block(g: Gateway): Promise<void> {
  const before = childCpu(g.pid);
  const times: number[] = [];
  for (let i = 0; i < BLOCK; i++) times.push(await call(g));
  const spent = cpuBetween(before, childCpu(g.pid));
  g.p50s.push(median(times));
  g.mainMs.push(spent.mainNs / 1e6 / BLOCK);
  g.processMs.push(spent.processNs / 1e6 / BLOCK);
}

try {
  const only = process.env.AB_TRANSPORTS?.split(",");
  for (const transport of ["stdio", "HTTP"] as const) {
    if (only && !only.includes(transport)) continue;
    const start = transport === "stdio" ? stdioGateway : httpGateway;
    const pair = [await start("base"), await start("this")] as const;
    try {
      for (const g of pair) for (let i = 0; i < WARMUP; i++) await call(g);
      for (let b = 0; b < BLOCKS; b++) {
        // Alternating which goes first, so that neither always follows the other.
        for (const g of b % 2 === 0 ? pair : [pair[1], pair[0]]) await block(g);
      }
      const [base, ours] = pair;
      const row = (name: string, pick: (g: Gateway) => number[]) => {
        const a = median(pick(base));
        const b = median(pick(ours));
        console.log(
          `${transport.padEnd(5)} ${name.padEnd(34)} base ${a.toFixed(3).padStart(7)} ms  this ${b
            .toFixed(3)
            .padStart(7)} ms  this/base ${(b / a).toFixed(3)}`,
        );
      };
      row("p50 (median of blocks)", (g) => g.p50s);
      row("gateway main-thread CPU/call", (g) => g.mainMs);
      row("gateway process CPU/call", (g) => g.processMs);
    } finally {
      for (const g of pair) await g.close();
    }
  }
  console.log(
    `${BLOCKS} blocks of ${BLOCK} calls per gateway; load average ${(await import("node:os"))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
} finally {
  await bench.close();
}
