/**
 * CPU profiles of `sciencegate serve gateway --eager` (the built CLI, else the sources through tsx)
 * under the user-path load of `gateway-user.bench.ts`: an MCP SDK client making N sequential calls
 * (default 3,000, after a warm-up) to the trivial `lookup` tool through the gateway over stdio, then
 * over Streamable HTTP on loopback. Not a `*.bench.ts`. Each gateway runs under `node --cpu-prof`,
 * writing its profile to `bench/profiles/gateway-<transport>/` (ignored by git) when it exits, with a
 * `window.json` beside it: the V8 clock span of the measured calls, so that the reader counts those
 * samples only (not start-up or warm-up), and the call count, so that it prints time per call:
 *
 *   npx tsx bench/profile-gateway.ts && npx tsx bench/lib/cpu-profile-top.ts bench/profiles/gateway-stdio 30
 *
 * `PROFILE_CALLS=N` sets the calls; `PROFILE_TRANSPORTS=stdio` or `=http` runs one; `PROFILE=0` runs
 * without the profiler. Prints wall and gateway main-thread CPU per call (a little above an unprofiled
 * run when the profiler is on).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Client as SdkClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { childCpu, cpuBetween } from "./lib/cpu-meter.js";
import { connectStdio, sciencegateCommand, startUserServers } from "./lib/user-servers.js";

const CALLS = Number(process.env.PROFILE_CALLS ?? 3_000);
const WARMUP = 300;
const PROFILING = process.env.PROFILE !== "0";
const TRANSPORTS = (process.env.PROFILE_TRANSPORTS ?? "stdio,http").split(",");

/** V8's profiler stamps samples with the monotonic clock in microseconds, as `process.hrtime` reads it. */
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

const bench = await startUserServers("sciencegate-profile-gateway-", "profile-direct");
const { scratch, manifests, trivial } = bench;
const project = join(scratch, "project");
await mkdir(project);
const line = [trivial.command.command, ...trivial.command.args].map((w) => `'${w}'`).join(" ");
await writeFile(join(project, "science.toml"), `[tools.${trivial.serverId}]\ncommand = "${line}"\n`);
const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...trivial.env };
const profiles = fileURLToPath(new URL("./profiles/", import.meta.url));

/** The gateway command under the profiler, writing into `dir`. */
function gatewayCommand(extra: string[], dir: string) {
  const base = sciencegateCommand([
    "serve",
    "gateway",
    "--eager",
    "--config",
    join(project, "science.toml"),
    "--manifests",
    manifests,
    ...extra,
  ]);
  const flags = PROFILING ? ["--cpu-prof", "--cpu-prof-dir", dir, "--cpu-prof-interval", "250"] : [];
  return { command: base.command, args: [...flags, ...base.args] };
}

async function measure(label: string, client: Client, pid: number, dir: string): Promise<void> {
  const call = async (index: number) => {
    const result = (await client.callTool({
      name: trivial.modelName,
      arguments: trivial.args(index),
    })) as CallToolResult;
    const [first] = result.content;
    if (result.isError || first?.type !== "text" || !first.text.includes(`"r${index}"`))
      throw new Error(`${label} answered ${JSON.stringify(result).slice(0, 300)}`);
  };
  for (let i = 0; i < WARMUP; i++) await call(i);
  const before = childCpu(pid);
  const fromUs = nowUs();
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) await call(WARMUP + i);
  const wall = performance.now() - start;
  const toUs = nowUs();
  const spent = cpuBetween(before, childCpu(pid));
  await writeFile(join(dir, "window.json"), JSON.stringify({ fromUs, toUs, calls: CALLS }));
  console.log(
    `${label}: ${CALLS} calls, ${(wall / CALLS).toFixed(3)} ms wall/call, gateway ` +
      `${(spent.mainNs / 1e6 / CALLS).toFixed(3)} ms main-thread CPU/call, ` +
      `${(spent.processNs / 1e6 / CALLS).toFixed(3)} ms process CPU/call (its children not counted)`,
  );
}

async function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

try {
  if (TRANSPORTS.includes("stdio")) {
    const dir = join(profiles, "gateway-stdio");
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const command = gatewayCommand(["--session", "profile"], dir);
    const gateway = await connectStdio(
      "profile-stdio",
      command,
      { ...env, SCIENCEGATE_HOME: join(scratch, "s") },
      project,
    );
    await measure("gateway stdio", gateway.client, gateway.pid, dir);
    // Closing stdin ends the gateway normally, which is when `--cpu-prof` writes the profile.
    await gateway.close();
  }
  if (TRANSPORTS.includes("http")) {
    const dir = join(profiles, "gateway-http");
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const command = gatewayCommand(["--http", "127.0.0.1:0"], dir);
    const child = spawn(command.command, command.args, {
      env: { ...env, SCIENCEGATE_HOME: join(scratch, "h") },
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
    const client = new SdkClient({ name: "profile-http", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    await measure("gateway HTTP", client, child.pid as number, dir);
    await client.close();
    await stopped(child);
  }
  // The profiles are written as the gateways exit; wait for the stdio one's too.
  await new Promise((resolve) => setTimeout(resolve, 500));
} finally {
  await bench.close();
}
