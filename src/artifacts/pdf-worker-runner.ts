import { type Clock, GovernanceError, systemClock } from "../core/index.js";
import type { PdfLimits } from "./pdf-limits.js";
import type { PdfWorkerMemory, PdfWorkerMessage } from "./pdf-worker-messages.js";
import { type PdfWorkerPool, sharedPdfWorkerPool } from "./pdf-worker-pool.js";

/** The text pdf.js found, page by page. */
export interface PdfWorkerOutput {
  /** Parser name and version, e.g. "pdfjs-dist 5.6.205". */
  parser: string;
  pages: { page: number; text: string }[];
}

/** Options of `runPdfWorker`. */
export interface RunPdfWorkerOptions {
  /** Times the wall-clock bound and the memory samples. @default systemClock */
  clock?: Clock;
  /** A label for error messages (a paper id or file name). */
  label?: string;
  /** Where the worker comes from. @default sharedPdfWorkerPool() */
  pool?: PdfWorkerPool;
}

const MIB = 1024 * 1024;
/** Heap pdf.js itself needs, added to the budget in the worker's heap cap. */
const PDFJS_HEAP_MB = 64;
/** How often the parent samples the process's resident memory. */
const MEMORY_SAMPLE_MS = 25;

/**
 * The memory budgets of the extractions running in this process. Resident memory is the process's,
 * not a thread's, so running extractions share their budgets instead of each being charged the others'.
 */
const runningBudgets = new Set<{ bytes: number }>();
let lastJob = 0;

function limitError(label: string, limit: keyof PdfLimits, max: number, actual: number): GovernanceError {
  const what = limit === "maxPages" ? "pages" : "characters of text";
  return new GovernanceError(
    "RESPONSE_TOO_LARGE",
    `PDF ${label} exceeds the ${limit} limit: more than ${max} ${what} (at least ${actual}); extraction stopped.`,
    { data: { limit, max, actual } },
  );
}

function memoryError(
  label: string,
  max: number,
  what: string,
  data: Record<string, unknown>,
): GovernanceError {
  return new GovernanceError(
    "RESPONSE_TOO_LARGE",
    `PDF ${label} exceeds the maxMemoryBytes limit (${Math.round(max / MIB)} MiB): ${what}; extraction stopped. ` +
      "Raise maxMemoryBytes only for a document you trust.",
    { data: { limit: "maxMemoryBytes", max, ...data } },
  );
}

/**
 * Extracts the text of a PDF in a warm `worker_threads` Worker of `pool` under every bound of `limits`
 * but `maxBytes`, and terminates that worker the moment one is crossed (the pool replaces it; other
 * files are not affected): pages and wall time (start-up included) in this thread;
 * characters and the size of an inflated stream in the worker, as the data arrives; memory with a heap
 * cap on the worker and a watchdog here that samples the process's resident memory (ArrayBuffers, which
 * the heap cap does not cover, included) every 25 ms from the moment the file reaches the worker.
 * @param data the PDF bytes (already checked for size and signature); transferred to the worker, so
 *   `data` is empty afterwards
 * @param limits the bounds to enforce (`maxBytes` is the caller's job: it is checked before reading)
 * @param options clock, label and pool
 * @returns the parser name and the text of every page
 * @throws GovernanceError `RESPONSE_TOO_LARGE` (data.limit `maxPages`, `maxCharacters` or
 *   `maxMemoryBytes`), `TIMEOUT` (data.limit `timeoutMs`), `NORMALIZATION_FAILED` when pdf.js cannot
 *   parse the file or the worker dies
 */
export function runPdfWorker(
  data: Uint8Array,
  limits: PdfLimits,
  options: RunPdfWorkerOptions = {},
): Promise<PdfWorkerOutput> {
  const clock = options.clock ?? systemClock;
  const label = options.label ?? "document";
  const maxStreamBytes = Math.floor(limits.maxMemoryBytes / 2);
  const heapCapMb = Math.ceil(limits.maxMemoryBytes / MIB) + PDFJS_HEAP_MB;
  const pool = options.pool ?? sharedPdfWorkerPool();
  let entry: ReturnType<PdfWorkerPool["acquire"]>;
  try {
    entry = pool.acquire(heapCapMb);
  } catch (error) {
    return Promise.reject(error);
  }
  const { worker } = entry;
  const job = ++lastJob;
  const timer = new AbortController();
  const output: PdfWorkerOutput = { parser: "pdfjs-dist", pages: [] };
  const budget = { bytes: limits.maxMemoryBytes };
  let baseline: number | undefined;
  let settled = false;

  return new Promise<PdfWorkerOutput>((resolve, reject) => {
    /** `memory` is set when the worker finished the file and can serve another. */
    const finish = (error: GovernanceError | undefined, memory?: PdfWorkerMemory) => {
      if (settled) return;
      settled = true;
      timer.abort();
      runningBudgets.delete(budget);
      worker.off("message", onMessage);
      worker.off("error", onError);
      worker.off("exit", onExit);
      if (memory) {
        const growth = baseline === undefined ? 0 : process.memoryUsage.rss() - baseline;
        pool.release(entry, memory, growth);
        if (error) reject(error);
        else resolve(output);
        return;
      }
      // Terminate before settling, so a caller never sees a result while the thread still runs.
      void pool.discard(entry).finally(() => (error ? reject(error) : resolve(output)));
    };
    clock.sleep(limits.timeoutMs, timer.signal).then(
      () =>
        finish(
          new GovernanceError(
            "TIMEOUT",
            `PDF ${label} exceeds the timeoutMs limit: extraction took longer than ${limits.timeoutMs} ms; stopped.`,
            { retryable: true, data: { limit: "timeoutMs", max: limits.timeoutMs } },
          ),
        ),
      () => {}, // aborted: the extraction settled first
    );
    const watchMemory = async () => {
      // The worker may sit in one synchronous decode for seconds; only this thread can stop it then.
      while (!settled) {
        await clock.sleep(MEMORY_SAMPLE_MS, timer.signal);
        if (baseline === undefined) continue;
        const growth = process.memoryUsage.rss() - baseline;
        let shared = 0;
        for (const running of runningBudgets) shared += running.bytes;
        if (growth > shared) {
          const grown = `the process's resident memory grew by ${Math.round(growth / MIB)} MiB`;
          finish(memoryError(label, limits.maxMemoryBytes, grown, { actual: growth }));
        }
      }
    };
    watchMemory().catch(() => {}); // aborted: the extraction settled
    const onMessage = (message: PdfWorkerMessage) => {
      if (settled || message.type === "ready" || message.job !== job) return;
      switch (message.type) {
        case "document":
          output.parser = message.parser;
          if (message.pageCount > limits.maxPages) {
            finish(limitError(label, "maxPages", limits.maxPages, message.pageCount));
          }
          return;
        case "page":
          output.pages.push({ page: message.page, text: message.text });
          if (output.pages.length > limits.maxPages) {
            finish(limitError(label, "maxPages", limits.maxPages, output.pages.length));
          }
          return;
        case "limit":
          if (message.limit === "maxCharacters") {
            finish(limitError(label, "maxCharacters", limits.maxCharacters, message.actual));
          } else {
            const inflates = `a compressed stream inflates to more than ${maxStreamBytes} bytes, half the budget`;
            finish(memoryError(label, limits.maxMemoryBytes, inflates, { streamBytes: message.actual }));
          }
          return;
        case "done":
          finish(undefined, message.memory);
          return;
        case "error":
          // pdf.js refused the file and let go of it: the worker is sound and serves the next one.
          finish(
            new GovernanceError(
              "NORMALIZATION_FAILED",
              `pdf.js could not read PDF ${label}: ${message.message}`,
              {
                data: { parserError: message.name },
              },
            ),
            message.memory,
          );
      }
    };
    const died = (reason: string, cause?: unknown) =>
      finish(
        new GovernanceError("NORMALIZATION_FAILED", `The PDF worker for ${label} stopped: ${reason}`, {
          ...(cause === undefined ? {} : { cause }),
        }),
      );
    const onError = (error: Error & { code?: string }) => {
      if (error.code === "ERR_WORKER_OUT_OF_MEMORY") {
        const heap = `pdf.js's heap outgrew its ${Math.ceil(limits.maxMemoryBytes / MIB) + PDFJS_HEAP_MB} MiB cap`;
        finish(memoryError(label, limits.maxMemoryBytes, heap, {}));
        return;
      }
      died(error.message, error);
    };
    const onExit = (code: number) => died(`it exited (code ${code}) before finishing`);
    worker.on("message", onMessage);
    worker.on("error", onError);
    worker.on("exit", onExit);
    entry.ready.then(
      () => {
        if (settled) return;
        // The budget counts what this file makes the process allocate, from the moment it arrives.
        baseline = process.memoryUsage.rss();
        runningBudgets.add(budget);
        const { maxCharacters } = limits;
        worker.postMessage({ type: "extract", job, data, maxCharacters, maxStreamBytes }, [
          data.buffer as ArrayBuffer,
        ]);
      },
      () => {}, // the worker's own error or exit event reports it
    );
  });
}
