/**
 * Runs the real LangGraph API dev server (`langgraphjs dev` from `@langchain/langgraph-cli`) on a free
 * loopback port, in its own process group, over a copy of an app folder's `langgraph.json` whose graph
 * paths point back at the folder: the server's state (`.langgraph_api`) lands in a throwaway directory,
 * and stopping signals the whole group (the CLI, tsx, the server and the MCP children it spawned).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";

const root = resolve(import.meta.dirname, "../..");
const LOG_LIMIT = 64 * 1024;

/** A process of the server's group, from /proc. */
export interface GroupProcess {
  pid: number;
  args: string;
}

/** A running dev server. */
export interface DevServer {
  url: string;
  /** The throwaway directory holding the config copy and the server's `.langgraph_api` state. */
  workDir: string;
  /** The last output of the CLI and the server (stdout and stderr). */
  log(): string;
  /** The processes of the server's process group now. */
  processes(): GroupProcess[];
  /**
   * Sends `signal` to the whole group and waits up to `graceMs` for every process to end; what is
   * left is killed. Idempotent.
   * @returns whether every process ended within the grace period
   */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<boolean>;
  /**
   * Sends `signal` to the API server's own process only, as a container runtime signals its main
   * process, waits up to `graceMs` for it to end, then stops the rest of the group (`stop`). The dev
   * CLI runs the server under tsx's watcher, which, when the whole group is signalled, passes the signal
   * on and kills the server 30 ms later unless it has heard back from the server by then: a server
   * still closing its stores under load is killed mid-close. Signalling the server alone leaves the
   * close to the server.
   * @returns whether the server process ended within the grace period and the group after it
   */
  stopServer(signal?: NodeJS.Signals, graceMs?: number): Promise<boolean>;
}

/** Options of {@link startDevServer}. */
export interface DevServerOptions {
  /** The folder holding `langgraph.json` (the server runs with it as the working directory). */
  appDir: string;
  /** Extra environment of the server. */
  env?: Record<string, string>;
  /** How long start-up may take. @default 120_000 */
  startTimeoutMs?: number;
}

/**
 * Starts the dev server and waits until it answers `GET /ok`.
 * @param options the app folder, environment, start-up timeout
 * @returns the server; call `stop()` and remove `workDir` when done
 * @throws Error with the server's output when it exits or does not answer in time
 */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const workDir = mkdtempSync(join(tmpdir(), "sciencegate-langgraph-server-"));
  const configPath = join(workDir, "langgraph.json");
  const config = JSON.parse(readFileSync(join(options.appDir, "langgraph.json"), "utf8")) as {
    graphs: Record<string, string>;
  };
  config.graphs = Object.fromEntries(
    Object.entries(config.graphs).map(([id, spec]) => {
      const [file = "", symbol] = spec.split(":");
      // Relative to the copy: the server joins (not resolves) a graph path onto its directory.
      return [id, `${relative(workDir, resolve(options.appDir, file))}${symbol ? `:${symbol}` : ""}`];
    }),
  );
  writeFileSync(configPath, JSON.stringify(config));
  writeFileSync(join(workDir, ".gitignore"), ".langgraph_api\n");
  const port = await freePort();
  const cliPackage = join(root, "node_modules/@langchain/langgraph-cli");
  const bin = (
    JSON.parse(readFileSync(join(cliPackage, "package.json"), "utf8")) as { bin: Record<string, string> }
  ).bin.langgraphjs;
  const child = spawn(
    process.execPath,
    [
      join(cliPackage, bin ?? "dist/cli/cli.mjs"),
      "dev",
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--no-browser",
      "--no-reload",
      "--config",
      configPath,
    ],
    {
      cwd: options.appDir,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, LANGGRAPH_CLI_NO_ANALYTICS: "1", BROWSER: "none", ...options.env },
    },
  );
  let output = "";
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-LOG_LIMIT);
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  const pgid = child.pid;
  if (pgid === undefined) throw new Error("the LangGraph dev server did not start (no pid)");
  // Should the test process itself end first (a timeout, a crash), the server must not outlive it.
  const killOnExit = () => signalGroup(pgid, "SIGKILL");
  process.once("exit", killOnExit);
  let stopping: Promise<boolean> | undefined;
  const server: DevServer = {
    url: `http://127.0.0.1:${port}`,
    workDir,
    log: () => output,
    processes: () => groupProcesses(pgid),
    stop: (signal = "SIGTERM", graceMs = 15_000) => {
      stopping ??= stopGroup(pgid, child, signal, graceMs).finally(() => process.off("exit", killOnExit));
      return stopping;
    },
    stopServer: async (signal = "SIGTERM", graceMs = 15_000) => {
      const entry = groupProcesses(pgid).find((p) => isApiServer(p.args));
      if (entry === undefined) throw new Error(`no API server process in the group:\n${output}`);
      process.kill(entry.pid, signal);
      const alive = () => groupProcesses(pgid).some((p) => p.pid === entry.pid);
      const deadline = Date.now() + graceMs;
      let running = alive();
      while (running && Date.now() < deadline) {
        await sleep(50);
        running = alive();
      }
      return (await server.stop(signal, graceMs)) && !running;
    },
  };
  try {
    await waitUntilReady(server.url, child, options.startTimeoutMs ?? 120_000, () => output);
  } catch (error) {
    await server.stop("SIGKILL", 5_000);
    rmSync(workDir, { recursive: true, force: true });
    throw error;
  }
  return server;
}

async function waitUntilReady(
  url: string,
  child: ChildProcess,
  timeoutMs: number,
  log: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the LangGraph dev server exited during start-up:\n${log()}`);
    }
    try {
      const response = await fetch(`${url}/ok`, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`the LangGraph dev server did not answer ${url}/ok within ${timeoutMs} ms:\n${log()}`);
}

async function stopGroup(
  pgid: number,
  child: ChildProcess,
  signal: NodeJS.Signals,
  graceMs: number,
): Promise<boolean> {
  signalGroup(pgid, signal);
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (groupProcesses(pgid).length === 0) return true;
    await sleep(100);
  }
  signalGroup(pgid, "SIGKILL");
  while (groupProcesses(pgid).length > 0 && Date.now() < deadline + 5_000) await sleep(100);
  child.stdout?.destroy();
  child.stderr?.destroy();
  return false;
}

/** The API server's own process: the API entrypoint run with tsx's loader (not tsx's watcher above it). */
function isApiServer(args: string): boolean {
  return args.includes("preflight.cjs") && args.includes("langgraph-api/dist/cli/entrypoint.mjs");
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is gone
  }
}

/**
 * The live processes whose process group is `pgid` (Linux /proc; zombies count as gone).
 * @param pgid the group id (the leader's pid)
 * @returns each process and its command line
 */
export function groupProcesses(pgid: number): GroupProcess[] {
  const found: GroupProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so parse after the last ")".
      const [state, , group] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(group) !== pgid || state === "Z") continue;
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim();
      found.push({ pid: Number(entry), args });
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address ? resolvePort(address.port) : reject(new Error("no port")),
      );
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
