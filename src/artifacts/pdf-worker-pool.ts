import { Worker } from "node:worker_threads";
import { GovernanceError } from "../core/index.js";
import type { PdfWorkerMemory, PdfWorkerMessage } from "./pdf-worker-messages.js";

/** Options of {@link PdfWorkerPool}. */
export interface PdfWorkerPoolOptions {
  /** Warm workers kept between files; extractions beyond it at the same moment get a worker of their own. @default 2 */
  maxIdleWorkers?: number;
  /** Files one worker extracts before it is replaced. @default 100 */
  maxFilesPerWorker?: number;
  /**
   * A worker is replaced after a file when its heap (plus ArrayBuffers) holds this much more than once
   * pdf.js was loaded, or when the process's resident memory grew by more than this during the file: a large document never leaves
   * a bloated worker to serve the next one. @default 134_217_728 (128 MiB)
   */
  recycleMemoryBytes?: number;
  /** An idle worker is ended after this long without a file. @default 30_000 */
  idleTimeoutMs?: number;
}

/** Counters of a pool, for benchmarks and tests. */
export interface PdfWorkerPoolStats {
  /** Workers started since the pool was made. */
  workersStarted: number;
  /** Workers replaced after a file because of `maxFilesPerWorker` or `recycleMemoryBytes`. */
  workersRecycled: number;
  /** Workers ended in the middle of a file (a bound crossed, a crash, a timeout). */
  workersTerminated: number;
  /** Warm workers waiting for a file now. */
  idleWorkers: number;
}

/** A started worker and what the pool knows about it. */
export interface PdfPoolWorker {
  readonly worker: Worker;
  /** The heap cap it was started with; only files with the same memory budget reuse it. */
  readonly heapCapMb: number;
  /** Resolves once pdf.js is loaded in it; rejects when it dies first. */
  readonly ready: Promise<void>;
  files: number;
}

const MIB = 1024 * 1024;
const PDFJS = "pdfjs-dist/legacy/build/pdf.mjs";
const PDFJS_WORKER = "pdfjs-dist/legacy/build/pdf.worker.mjs";

function startWorker(heapCapMb: number): Worker {
  // The heap cap stops a heap that outgrows the budget at once; ArrayBuffers escape it (see the watchdog).
  const resourceLimits = { maxOldGenerationSizeMb: heapCapMb };
  // From dist/ this file is .js and so is the worker entry.
  if (!import.meta.url.endsWith(".ts")) {
    return new Worker(new URL("./pdf-extract-worker.js", import.meta.url), { resourceLimits });
  }
  // From sources (vitest, tsx) the entry is .ts: Node 20 does not apply a parent's tsx hooks to a
  // worker, so a tiny eval'd script registers tsx in the worker, then imports the entry. pdf.js is
  // loaded first: through tsx (a transform and 8 MB of source maps) it costs 4 s and 350 MB per worker.
  const entry = new URL("./pdf-extract-worker.ts", import.meta.url).href;
  const preload = [PDFJS, PDFJS_WORKER].map(
    (s) => `await import(${JSON.stringify(import.meta.resolve(s))});`,
  );
  const tsxApi = JSON.stringify(import.meta.resolve("tsx/esm/api"));
  const bootstrap = `(async () => { ${preload.join(" ")} (await import(${tsxApi})).register(); await import(${JSON.stringify(entry)}); })();`;
  return new Worker(bootstrap, { eval: true, resourceLimits });
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (Number.isInteger(value) && value >= 0) return value;
  throw new GovernanceError(
    "INVALID_INPUT",
    `PdfWorkerPool option ${name} must be a whole number >= 0, got ${value}.`,
    {
      data: { option: name, value },
    },
  );
}

/**
 * Warm pdf.js worker threads reused from one PDF to the next, so a file pays for parsing, not for
 * starting a thread and loading pdf.js (about 130 ms). Bounded: at most `maxIdleWorkers` wait between
 * files, each is replaced after `maxFilesPerWorker` files or once a file left it (or the process)
 * holding more than `recycleMemoryBytes`, and a worker that crossed a bound, crashed or timed out is
 * terminated and never reused. Idle workers do not keep the process alive; `close()` ends them all.
 * Each file's bounds are enforced by `runPdfWorker` exactly as in a fresh worker.
 * @example
 * const pool = new PdfWorkerPool({ maxIdleWorkers: 1 });
 * for (const pdfPath of files) await extractPdf({ pdfPath, outDir: out(pdfPath) }, {}, { pool });
 * await pool.close();
 */
export class PdfWorkerPool {
  readonly #maxIdle: number;
  readonly #maxFiles: number;
  readonly #recycleBytes: number;
  readonly #idleTimeoutMs: number;
  readonly #idle: { entry: PdfPoolWorker; timer: NodeJS.Timeout }[] = [];
  readonly #busy = new Set<PdfPoolWorker>();
  readonly #stats = { workersStarted: 0, workersRecycled: 0, workersTerminated: 0 };
  #closed = false;

  /**
   * @param options pool size, recycling and idle bounds
   * @throws GovernanceError `INVALID_INPUT` when an option is not a whole number >= 0
   */
  constructor(options: PdfWorkerPoolOptions = {}) {
    this.#maxIdle = positive("maxIdleWorkers", options.maxIdleWorkers, 2);
    this.#maxFiles = Math.max(1, positive("maxFilesPerWorker", options.maxFilesPerWorker, 100));
    this.#recycleBytes = positive("recycleMemoryBytes", options.recycleMemoryBytes, 128 * MIB);
    this.#idleTimeoutMs = positive("idleTimeoutMs", options.idleTimeoutMs, 30_000);
  }

  /** Whether `close()` was called. */
  get isClosed(): boolean {
    return this.#closed;
  }

  /** Counters since the pool was made, and the idle workers now. */
  get stats(): PdfWorkerPoolStats {
    return { ...this.#stats, idleWorkers: this.#idle.length };
  }

  /**
   * A worker for one file: a warm one started with the same heap cap, else a new one. The caller
   * must hand it back with `release` or `discard`.
   * @param heapCapMb the worker's V8 heap cap
   * @returns the worker, ready or becoming ready (await its `ready`)
   * @throws GovernanceError `INVALID_CONFIG` once the pool is closed
   */
  acquire(heapCapMb: number): PdfPoolWorker {
    if (this.#closed) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        "The PDF worker pool is closed; create a new PdfWorkerPool.",
      );
    }
    const index = this.#idle.findIndex((idle) => idle.entry.heapCapMb === heapCapMb);
    const found = index >= 0 ? this.#idle.splice(index, 1)[0] : undefined;
    if (found) clearTimeout(found.timer);
    const entry = found?.entry ?? this.#start(heapCapMb);
    entry.worker.ref(); // a file in progress keeps the process alive, as any pending I/O does
    this.#busy.add(entry);
    return entry;
  }

  /**
   * Hands back a worker that finished its file cleanly: kept warm unless it reached `maxFilesPerWorker`,
   * the memory it or the process holds crossed `recycleMemoryBytes`, or enough workers are idle.
   * @param entry the worker from `acquire`
   * @param memory what the worker reported holding after the file
   * @param rssGrowth how much the process's resident memory grew during the file, in bytes
   */
  release(entry: PdfPoolWorker, memory: PdfWorkerMemory, rssGrowth: number): void {
    this.#busy.delete(entry);
    entry.files++;
    const bloated = memory.heapGrowthBytes > this.#recycleBytes || rssGrowth > this.#recycleBytes;
    const worn = entry.files >= this.#maxFiles;
    if (this.#closed || bloated || worn || this.#idle.length >= this.#maxIdle) {
      if (bloated || worn) this.#stats.workersRecycled++;
      void entry.worker.terminate();
      return;
    }
    entry.worker.unref();
    const timer = setTimeout(() => this.#evict(entry), this.#idleTimeoutMs);
    timer.unref();
    this.#idle.push({ entry, timer });
  }

  /**
   * Ends a worker in the middle of a file (a bound crossed, a crash, a timeout); it is never reused.
   * @param entry the worker from `acquire`
   * @returns when the thread has stopped
   */
  async discard(entry: PdfPoolWorker): Promise<void> {
    this.#busy.delete(entry);
    this.#stats.workersTerminated++;
    await entry.worker.terminate();
  }

  /**
   * Ends every worker, idle or busy (a busy one's file fails as a stopped worker), and refuses new
   * files.
   * @returns when every thread has stopped
   */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#idle.map((idle) => idle.entry), ...this.#busy];
    for (const idle of this.#idle) clearTimeout(idle.timer);
    this.#idle.length = 0;
    this.#busy.clear();
    await Promise.all(all.map((entry) => entry.worker.terminate()));
  }

  #evict(entry: PdfPoolWorker): void {
    const index = this.#idle.findIndex((idle) => idle.entry === entry);
    if (index < 0) return;
    this.#idle.splice(index, 1);
    void entry.worker.terminate();
  }

  #start(heapCapMb: number): PdfPoolWorker {
    const worker = startWorker(heapCapMb);
    this.#stats.workersStarted++;
    const ready = new Promise<void>((resolve, reject) => {
      const onMessage = (message: PdfWorkerMessage) => {
        if (message.type !== "ready") return;
        worker.off("message", onMessage);
        resolve();
      };
      worker.on("message", onMessage);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`it exited (code ${code}) while loading pdf.js`)));
    });
    ready.catch(() => {}); // the file that waits on it reports the failure
    const entry: PdfPoolWorker = { worker, heapCapMb, ready, files: 0 };
    // An idle worker that dies (out of memory while idle is impossible, but a crash is not) leaves the pool.
    worker.once("exit", () => this.#evict(entry));
    return entry;
  }
}

let shared: PdfWorkerPool | undefined;

/**
 * The process-wide pool `extractPdf` uses when given none: default bounds, idle workers unref'd.
 * @returns the same pool on every call (a new one after it was closed)
 */
export function sharedPdfWorkerPool(): PdfWorkerPool {
  if (!shared || shared.isClosed) shared = new PdfWorkerPool();
  return shared;
}
