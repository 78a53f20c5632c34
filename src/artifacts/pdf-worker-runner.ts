import { Worker } from "node:worker_threads";
import { type Clock, GovernanceError, systemClock } from "../core/index.js";
import type { PdfLimits } from "./pdf-limits.js";
import type { PdfWorkerInput, PdfWorkerMessage } from "./pdf-worker-messages.js";

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
}

const MIB = 1024 * 1024;
/** Heap pdf.js itself needs, added to the budget in the worker's heap cap. */
const PDFJS_HEAP_MB = 64;
/** How often the parent samples the process's resident memory. */
const MEMORY_SAMPLE_MS = 25;
const PDFJS = "pdfjs-dist/legacy/build/pdf.mjs";
const PDFJS_WORKER = "pdfjs-dist/legacy/build/pdf.worker.mjs";

/**
 * The memory budgets of the extractions running in this process. Resident memory is the process's,
 * not a thread's, so running extractions share their budgets instead of each being charged the others'.
 */
const runningBudgets = new Set<{ bytes: number }>();

function startWorker(input: PdfWorkerInput, maxMemoryBytes: number): Worker {
  // The heap cap stops a heap that outgrows the budget at once; ArrayBuffers escape it (see the watchdog).
  const resourceLimits = { maxOldGenerationSizeMb: Math.ceil(maxMemoryBytes / MIB) + PDFJS_HEAP_MB };
  const transferList = [input.data.buffer as ArrayBuffer];
  // From dist/ this file is .js and so is the worker entry.
  if (!import.meta.url.endsWith(".ts")) {
    return new Worker(new URL("./pdf-extract-worker.js", import.meta.url), {
      workerData: input,
      transferList,
      resourceLimits,
    });
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
  return new Worker(bootstrap, { eval: true, workerData: input, transferList, resourceLimits });
}

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
 * Extracts the text of a PDF in a `worker_threads` Worker under every bound of `limits` but
 * `maxBytes`, and terminates the worker the moment one is crossed: pages and wall time in this thread;
 * characters and the size of an inflated stream in the worker, as the data arrives; memory with a heap
 * cap on the worker and a watchdog here that samples the process's resident memory (ArrayBuffers, which
 * the heap cap does not cover, included) every 25 ms once pdf.js is loaded.
 * @param data the PDF bytes (already checked for size and signature); transferred to the worker, so
 *   `data` is empty afterwards
 * @param limits the bounds to enforce (`maxBytes` is the caller's job: it is checked before reading)
 * @param options clock and label
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
  const worker = startWorker(
    { data, maxCharacters: limits.maxCharacters, maxStreamBytes },
    limits.maxMemoryBytes,
  );
  const timer = new AbortController();
  const output: PdfWorkerOutput = { parser: "pdfjs-dist", pages: [] };
  const budget = { bytes: limits.maxMemoryBytes };
  let baseline: number | undefined;
  let settled = false;

  return new Promise<PdfWorkerOutput>((resolve, reject) => {
    const finish = (error: GovernanceError | undefined) => {
      if (settled) return;
      settled = true;
      timer.abort();
      runningBudgets.delete(budget);
      // Terminate before settling, so a caller never sees a result while the thread still runs.
      void worker.terminate().finally(() => (error ? reject(error) : resolve(output)));
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
    worker.on("message", (message: PdfWorkerMessage) => {
      if (settled) return;
      switch (message.type) {
        case "ready":
          baseline = process.memoryUsage.rss();
          runningBudgets.add(budget);
          return;
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
          finish(undefined);
          return;
        case "error":
          finish(
            new GovernanceError(
              "NORMALIZATION_FAILED",
              `pdf.js could not read PDF ${label}: ${message.message}`,
              {
                data: { parserError: message.name },
              },
            ),
          );
      }
    });
    const died = (reason: string, cause?: unknown) =>
      finish(
        new GovernanceError("NORMALIZATION_FAILED", `The PDF worker for ${label} stopped: ${reason}`, {
          ...(cause === undefined ? {} : { cause }),
        }),
      );
    worker.on("error", (error: Error & { code?: string }) => {
      if (error.code === "ERR_WORKER_OUT_OF_MEMORY") {
        const heap = `pdf.js's heap outgrew its ${Math.ceil(limits.maxMemoryBytes / MIB) + PDFJS_HEAP_MB} MiB cap`;
        finish(memoryError(label, limits.maxMemoryBytes, heap, {}));
        return;
      }
      died(error.message, error);
    });
    worker.on("exit", (code) => died(`it exited (code ${code}) before finishing`));
  });
}
