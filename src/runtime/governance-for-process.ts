/**
 * One governance runtime per server process. A server that builds its graph per request (the LangGraph
 * API server calls a graph factory for every run) must not open a server pool, a ledger and child
 * processes per run: this opens them on first use, hands every later caller the same runtime, and closes
 * it when the process is told to stop (see ARCHITECTURE.md, "State: who owns what").
 */

import { GovernanceError } from "../core/index.js";

/** What {@link governanceForProcess} needs of a runtime: a `close()` (a `createGovernance` runtime has it). */
export interface ClosableGovernance {
  /** Releases the runtime; `governanceForProcess` calls it once, at shutdown. */
  close(): Promise<void>;
}

/** A signal listener as `process.rawListeners` returns it (a `once` listener stays one when put back). */
export type SignalListener = (signal: NodeJS.Signals) => void;

/** The part of Node's `process` the shutdown handling uses (the seam for tests). */
export interface ShutdownProcess {
  readonly pid: number;
  /** Adds a signal listener (`process.on`). */
  on(signal: NodeJS.Signals, listener: SignalListener): unknown;
  /** Removes a signal listener (`process.removeListener`). */
  removeListener(signal: NodeJS.Signals, listener: SignalListener): unknown;
  /** The signal's listeners, `once` wrappers included (`process.rawListeners`). */
  rawListeners(signal: NodeJS.Signals): SignalListener[];
  /** The signal's listeners (`process.listeners`). */
  listeners(signal: NodeJS.Signals): SignalListener[];
  /** How many listeners the signal has (`process.listenerCount`). */
  listenerCount(signal: NodeJS.Signals): number;
  /** Sends a signal to a process (`process.kill`): the process re-raises the signal once closed. */
  kill(pid: number, signal: NodeJS.Signals): unknown;
}

/** Options of {@link governanceForProcess}. */
export interface GovernanceForProcessOptions {
  /** The signals that close the runtime. @default ["SIGTERM", "SIGINT"] */
  signals?: readonly NodeJS.Signals[] | undefined;
  /** The process whose signals are watched. @default the current `process` */
  process?: ShutdownProcess | undefined;
  /** Told when closing on a signal fails (the process still ends). @default a line on stderr */
  onCloseError?: ((error: unknown) => void) | undefined;
}

/** The per-process runtime: call it for the runtime (opened on the first call); `close()` ends it. */
export interface ProcessGovernance<G extends ClosableGovernance> {
  /**
   * The runtime, opened by the first call; concurrent first calls share one opening. When opening
   * fails, the error is thrown and the next call tries again.
   * @throws GovernanceError `CANCELLED` after `close()` (or a shutdown signal)
   */
  (): Promise<G>;
  /** Closes the runtime (if it was opened) and stops watching signals; later calls return the same promise. */
  close(): Promise<void>;
}

/**
 * Opens a governance runtime once per process, on first use, and closes it on shutdown. From the first
 * use on, SIGTERM and SIGINT close the runtime first (running calls finish, or are cancelled after
 * `closeGraceMs`, each with its ledger row; then servers and stores close): the signal's other handlers
 * present at that moment (a host's own, such as the LangGraph API server's, which flushes its storage
 * and ends the process) are held back and run once the runtime is closed; without any, the signal is
 * raised again so the process ends as it would have. A repeated signal while closing waits for the
 * same close; a handler the process hides from `process.listeners` (tsx's signal relay) is left alone.
 * On a plain `process.exit()` nothing asynchronous can run: the ledger still commits every row handed
 * to it.
 * @param create opens the runtime, e.g. `() => createGovernance(options)`
 * @param options signals, process seam, close-error reporting
 * @returns the per-process runtime getter
 * @example
 * const governance = governanceForProcess(() => createGovernance({ config: "extensions_config.json" }));
 * export const graph = async () => createGovernedAgent({ model, governance: await governance(), cardFormat: "hitl" });
 */
export function governanceForProcess<G extends ClosableGovernance>(
  create: () => Promise<G>,
  options: GovernanceForProcessOptions = {},
): ProcessGovernance<G> {
  const proc = options.process ?? nodeProcess;
  const signals = options.signals ?? ["SIGTERM", "SIGINT"];
  const onCloseError =
    options.onCloseError ??
    ((error: unknown) => process.stderr.write(`sciencegate: closing governance failed: ${String(error)}\n`));
  let opening: Promise<G> | undefined;
  let closing: Promise<void> | undefined;
  /** The other handlers of each signal, held back while the runtime is open. */
  let held: Map<NodeJS.Signals, SignalListener[]> | undefined;

  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    // A repeated signal (a second Ctrl-C, or a supervisor such as tsx passing the signal on) waits for
    // the same close: the process ends once the runtime is closed, bounded by its `closeGraceMs`.
    if (signalled) return;
    signalled = true;
    const others = held?.get(signal) ?? [];
    void closeRuntime()
      .catch(onCloseError)
      .finally(() => {
        release();
        // Each held handler now gets the signal it missed (a `once` wrapper then removes itself).
        for (const listener of others) listener(signal);
        // Nobody else ends the process: the signal's default action does (the exit status says so).
        if (others.length === 0 && proc.listenerCount(signal) === 0) proc.kill(proc.pid, signal);
      });
  };
  const watch = () => {
    held = new Map();
    for (const signal of signals) {
      // Only the handlers the process shows: one a loader hides (tsx reports signals to its parent
      // that way) keeps running at once. A `once` handler is held as its wrapper, so it stays one.
      const shown = new Set(proc.listeners(signal));
      const others = proc.rawListeners(signal).filter((raw) => shown.has(unwrap(raw)));
      for (const listener of others) proc.removeListener(signal, listener);
      held.set(signal, others);
      proc.on(signal, onSignal);
    }
  };
  const release = () => {
    if (!held) return;
    for (const [signal, others] of held) {
      proc.removeListener(signal, onSignal);
      for (const listener of others) proc.on(signal, listener);
    }
    held = undefined;
  };
  const closeRuntime = (): Promise<void> => {
    closing ??= (async () => {
      const runtime = await opening?.catch(() => undefined);
      await runtime?.close();
    })();
    return closing;
  };
  const close = (): Promise<void> => {
    release();
    return closeRuntime();
  };

  const get = (): Promise<G> => {
    if (closing) {
      return Promise.reject(
        new GovernanceError("CANCELLED", "The governance runtime of this process is closed (shutdown)."),
      );
    }
    if (!opening) {
      const attempt = create();
      opening = attempt;
      attempt.catch(() => {
        if (opening === attempt && !closing) opening = undefined;
      });
      if (!held) watch();
    }
    return opening;
  };
  return Object.assign(get, { close });
}

/** The current process behind the seam. */
const nodeProcess: ShutdownProcess = {
  pid: process.pid,
  on: (signal, listener) => process.on(signal, listener),
  removeListener: (signal, listener) => process.removeListener(signal, listener),
  // Node types them as `Function`; a signal's listeners take the signal.
  rawListeners: (signal) => process.rawListeners(signal) as SignalListener[],
  listeners: (signal) => process.listeners(signal) as SignalListener[],
  listenerCount: (signal) => process.listenerCount(signal),
  kill: (pid, signal) => process.kill(pid, signal),
};

/** The handler behind a `once` wrapper (`rawListeners` gives the wrapper, `listeners` the handler). */
function unwrap(raw: SignalListener): SignalListener {
  return (raw as SignalListener & { listener?: SignalListener }).listener ?? raw;
}
