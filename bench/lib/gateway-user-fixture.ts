/**
 * What the user-path gateway benchmark drives, started the way users start it: the raw MCP SDK client
 * on a stdio child of each server, and the same SDK client on `sciencegate serve gateway --eager`
 * (the built CLI) over stdio and over Streamable HTTP on a loopback port, each gateway governing its
 * own children of the same two servers (the trivial one and the bundled sources server, see
 * `user-servers.ts`). The gateways read a `science.toml` project naming both servers and a manifest
 * folder with both manifests; their data (SQLite ledger, file CAS) lives in a temp folder.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type Command,
  connectStdio,
  type SdkClient,
  sciencegateCommand,
  startUserServers,
  type UserServer,
} from "./user-servers.js";

/** One way of reaching a server: an MCP SDK client, and the processes whose CPU its calls cost. */
export interface Route {
  client: Client;
  /** The process the client talks to, and every process it started (sampled live). */
  pids(): number[];
}

/** Everything the benchmark drives; `close()` stops every process and removes the folders. */
export interface GatewayUserFixture {
  trivial: UserServer;
  sources: UserServer;
  direct: { trivial: Route; sources: Route };
  gatewayStdio: Route;
  gatewayHttp: Route;
  close(): Promise<void>;
}

/** A process and its descendants, from `/proc/<pid>/task/<tid>/children` (Linux); else the process alone. */
export function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    const at = out[i] as number;
    try {
      const children = readFileSync(`/proc/${at}/task/${at}/children`, "utf8").trim();
      if (children !== "") out.push(...children.split(/\s+/).map(Number));
    } catch {
      // Gone, or not Linux: its CPU is not sampled.
    }
  }
  return out;
}

/** Resident set size of a process in bytes (`/proc/<pid>/status` VmRSS), NaN when unknown. */
export function rssBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

function sdkRoute(sdk: SdkClient): Route {
  return { client: sdk.client, pids: () => processTree(sdk.pid) };
}

/** `science.toml` naming the servers by their commands (the gateway's children inherit its environment). */
function scienceToml(servers: readonly UserServer[]): string {
  const quote = (word: string) => `'${word}'`;
  return servers
    .map((s) => {
      const line = [s.command.command, ...s.command.args].map(quote).join(" ");
      return `[tools.${s.serverId}]\ncommand = "${line}"\n`;
    })
    .join("\n");
}

/** Starts the HTTP gateway on a free loopback port and waits until it says where it listens. */
async function startHttpGateway(
  command: Command,
  env: Record<string, string>,
  cwd: string,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(command.command, command.args, { env, cwd, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`The HTTP gateway did not listen in 60 s: ${stderr}`)),
      60_000,
    );
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-4000);
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`The HTTP gateway exited (${code}): ${stderr}`));
    });
  });
  return { child, url };
}

/**
 * Starts the servers, the direct clients and both gateways.
 * @returns the fixture
 * @throws Error when a process does not start or a gateway does not list both tools
 */
export async function createGatewayUserFixture(): Promise<GatewayUserFixture> {
  const bench = await startUserServers("sciencegate-bench-gateway-user-", "bench-direct");
  const { scratch, manifests, trivial, sources } = bench;
  const { trivial: directTrivial, sources: directSources } = bench.direct;
  const close = bench.close;
  try {
    const project = join(scratch, "project");
    await mkdir(project);
    await writeFile(join(project, "science.toml"), scienceToml([trivial, sources.server]));
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      ...trivial.env,
      ...sources.server.env,
    };
    const gatewayArgs = ["--eager", "--config", join(project, "science.toml"), "--manifests", manifests];
    const stdioCommand = sciencegateCommand(["serve", "gateway", ...gatewayArgs, "--session", "bench"]);
    const stdio = await connectStdio(
      "bench-gateway",
      stdioCommand,
      { ...env, SCIENCEGATE_HOME: join(scratch, "stdio-data") },
      project,
    );
    bench.onClose(() => stdio.close());

    const httpCommand = sciencegateCommand(["serve", "gateway", ...gatewayArgs, "--http", "127.0.0.1:0"]);
    const http = await startHttpGateway(
      httpCommand,
      { ...env, SCIENCEGATE_HOME: join(scratch, "http-data") },
      project,
    );
    bench.onClose(
      () =>
        new Promise<void>((resolve) => {
          if (http.child.exitCode !== null) return resolve();
          http.child.once("exit", () => resolve());
          http.child.kill("SIGTERM");
        }),
    );
    const httpClient = new Client({ name: "bench-gateway-http", version: "1.0.0" });
    await httpClient.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    bench.onClose(() => httpClient.close());

    for (const [label, client] of [
      ["stdio", stdio.client],
      ["HTTP", httpClient],
    ] as const) {
      const listed = (await client.listTools()).tools.map((t) => t.name);
      for (const server of [trivial, sources.server]) {
        if (!listed.includes(server.modelName)) {
          throw new Error(`The ${label} gateway lists ${listed.join(", ")}, not ${server.modelName}.`);
        }
      }
    }
    const httpPid = http.child.pid;
    if (httpPid === undefined) throw new Error("The HTTP gateway has no process id.");
    return {
      trivial,
      sources: sources.server,
      direct: { trivial: sdkRoute(directTrivial), sources: sdkRoute(directSources) },
      gatewayStdio: sdkRoute(stdio),
      gatewayHttp: { client: httpClient, pids: () => processTree(httpPid) },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
