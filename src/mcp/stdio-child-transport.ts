/**
 * The pool's stdio transport: the MCP SDK's `StdioClientTransport` behaviour (cross-spawn, the SDK's
 * read buffer and message framing, stderr handed out before the start, stdin end then SIGTERM then
 * SIGKILL on close) plus what the SDK's cannot do, because it keeps its child to itself: the child and
 * its pipes keep the parent process alive only while a request is open (`hold`). A script that never
 * calls `close()` then exits once its own work is done, and the child, its stdin closed, ends too.
 */
import type { ChildProcess } from "node:child_process";
import { PassThrough, type Stream } from "node:stream";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import spawn from "cross-spawn";
import { atExit } from "../core/index.js";

/** How long `close()` waits after ending stdin, and after SIGTERM, before the next step (as the SDK). */
const CLOSE_STEP_MS = 2_000;

/** What starts the child. */
export interface StdioChildParameters {
  command: string;
  args?: readonly string[] | undefined;
  /** The child's whole environment is the SDK's safe defaults overlaid with this. */
  env?: Record<string, string> | undefined;
  cwd?: string | undefined;
}

/** An MCP client transport over a child process's stdin and stdout; stderr is piped to {@link stderr}. */
export class StdioChildTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #params: StdioChildParameters;
  readonly #readBuffer = new ReadBuffer();
  readonly #stderr = new PassThrough();
  #child: ChildProcess | undefined;
  #holds = 0;
  #drained: Promise<void> | undefined;
  #forgetAtExit: (() => void) | undefined;

  /** @param params command, arguments, environment and working directory of the child */
  constructor(params: StdioChildParameters) {
    this.#params = params;
  }

  /** The child's stderr, available before `start()` so that no early line is lost. */
  get stderr(): Stream {
    return this.#stderr;
  }

  /** The child's pid while it runs. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /**
   * Keeps the parent process alive for the child until the returned function is called (once per hold;
   * holds nest). Take one around every request that waits for the child.
   * @returns the release
   */
  hold(): () => void {
    if (this.#holds++ === 0) this.#setRef(true);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holds === 0) this.#setRef(false);
    };
  }

  /** Spawns the child. @throws the spawn error (e.g. `spawn nodee ENOENT`) */
  start(): Promise<void> {
    if (this.#child) throw new Error("StdioChildTransport already started");
    const { command, args = [], env, cwd } = this.#params;
    return new Promise((resolve, reject) => {
      const child = spawn(command, [...args], {
        env: { ...getDefaultEnvironment(), ...env },
        stdio: ["pipe", "pipe", "pipe"],
        shell: false,
        windowsHide: process.platform === "win32",
        ...(cwd === undefined ? {} : { cwd }),
      });
      this.#child = child;
      child.on("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on("spawn", () => {
        // A child left running at exit is told to stop (its stdin closing usually does that already).
        this.#forgetAtExit = atExit(() => child.kill("SIGTERM"));
        resolve();
      });
      child.on("close", () => {
        this.#forgetAtExit?.();
        if (this.#child === child) this.#child = undefined;
        this.onclose?.();
      });
      child.stdin?.on("error", (error) => this.onerror?.(error));
      child.stdout?.on("data", (chunk: Buffer) => {
        try {
          this.#readBuffer.append(chunk);
          this.#readMessages();
        } catch (error) {
          this.onerror?.(error as Error);
          void this.close().catch(() => undefined);
        }
      });
      child.stdout?.on("error", (error) => this.onerror?.(error));
      child.stderr?.pipe(this.#stderr);
      this.#setRef(this.#holds > 0);
    });
  }

  /**
   * Writes one message to the child's stdin, waiting for `drain` when its buffer is full. Every write
   * made while the buffer is full waits on one shared listener, so a thousand calls in flight add one
   * `drain` listener, not a thousand; a pipe that closes instead of draining releases them too.
   */
  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (!stdin) return Promise.reject(new Error("Not connected"));
    if (stdin.write(serializeMessage(message))) return Promise.resolve();
    this.#drained ??= new Promise<void>((resolve) => {
      const done = () => {
        stdin.off("drain", done);
        stdin.off("close", done);
        this.#drained = undefined;
        resolve();
      };
      stdin.on("drain", done);
      stdin.on("close", done);
    });
    return this.#drained;
  }

  /** Ends stdin, then sends SIGTERM and SIGKILL to a child that does not exit, each after 2 s. */
  async close(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (child) {
      const release = this.hold();
      try {
        const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
        const step = () =>
          Promise.race([closed, new Promise((resolve) => setTimeout(resolve, CLOSE_STEP_MS).unref())]);
        try {
          child.stdin?.end();
        } catch {
          // already closed
        }
        await step();
        for (const signal of ["SIGTERM", "SIGKILL"] as const) {
          if (child.exitCode !== null || child.signalCode !== null) break;
          try {
            child.kill(signal);
          } catch {
            // gone meanwhile
          }
          if (signal === "SIGTERM") await step();
        }
      } finally {
        release();
      }
    }
    this.#readBuffer.clear();
  }

  #readMessages(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.#readBuffer.readMessage();
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  /** Whether the child and its pipes count as work that keeps the parent process alive. */
  #setRef(ref: boolean): void {
    const child = this.#child;
    if (!child) return;
    for (const handle of [child, child.stdin, child.stdout, child.stderr]) {
      if (!isRefable(handle)) continue;
      if (ref) handle.ref();
      else handle.unref();
    }
  }
}

/** Piped stdio streams are sockets, which Node's stream types do not say: checked, not assumed. */
function isRefable(handle: unknown): handle is { ref(): unknown; unref(): unknown } {
  const h = handle as { ref?: unknown; unref?: unknown } | null | undefined;
  return typeof h?.ref === "function" && typeof h.unref === "function";
}
