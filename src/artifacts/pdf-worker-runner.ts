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
  /** Times the wall-clock bound. @default systemClock */
  clock?: Clock;
  /** A label for error messages (a paper id or file name). */
  label?: string;
}

/** Heap cap of the worker, so a hostile PDF cannot take the process's memory with it. */
const WORKER_HEAP_MB = 1024;

function startWorker(input: PdfWorkerInput): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: WORKER_HEAP_MB };
  // From dist/ this file is .js and so is the worker entry.
  if (!import.meta.url.endsWith(".ts")) {
    return new Worker(new URL("./pdf-extract-worker.js", import.meta.url), {
      workerData: input,
      resourceLimits,
    });
  }
  // From sources (vitest, tsx) the entry is .ts: Node 20 does not apply a parent's tsx hooks to a
  // worker, so a tiny eval'd script registers tsx in the worker, then imports the entry.
  const entry = new URL("./pdf-extract-worker.ts", import.meta.url).href;
  const tsxApi = import.meta.resolve("tsx/esm/api");
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: input, resourceLimits });
}

function limitError(label: string, limit: keyof PdfLimits, max: number, actual: number): GovernanceError {
  const what = limit === "maxPages" ? "pages" : "characters of text";
  return new GovernanceError(
    "RESPONSE_TOO_LARGE",
    `PDF ${label} exceeds the ${limit} limit: more than ${max} ${what} (at least ${actual}); extraction stopped.`,
    { data: { limit, max, actual } },
  );
}

/**
 * Extracts the text of a PDF in a `worker_threads` Worker. The parent enforces the page, character
 * and wall-time bounds and terminates the worker the moment one is crossed.
 * @param data the PDF bytes (already checked for size and signature)
 * @param limits the bounds to enforce (`maxBytes` is the caller's job: it is checked before reading)
 * @param options clock and label
 * @returns the parser name and the text of every page
 * @throws GovernanceError `RESPONSE_TOO_LARGE` (data.limit `maxPages` or `maxCharacters`), `TIMEOUT`
 *   (data.limit `timeoutMs`), `NORMALIZATION_FAILED` when pdf.js cannot parse the file or the worker dies
 */
export function runPdfWorker(
  data: Uint8Array,
  limits: PdfLimits,
  options: RunPdfWorkerOptions = {},
): Promise<PdfWorkerOutput> {
  const clock = options.clock ?? systemClock;
  const label = options.label ?? "document";
  const worker = startWorker({ data });
  const timer = new AbortController();
  const output: PdfWorkerOutput = { parser: "pdfjs-dist", pages: [] };
  let characters = 0;
  let settled = false;

  return new Promise<PdfWorkerOutput>((resolve, reject) => {
    const finish = (error: GovernanceError | undefined) => {
      if (settled) return;
      settled = true;
      timer.abort();
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
    worker.on("message", (message: PdfWorkerMessage) => {
      if (settled) return;
      switch (message.type) {
        case "document":
          output.parser = message.parser;
          if (message.pageCount > limits.maxPages) {
            finish(limitError(label, "maxPages", limits.maxPages, message.pageCount));
          }
          return;
        case "page":
          output.pages.push({ page: message.page, text: message.text });
          characters += message.text.length;
          if (output.pages.length > limits.maxPages) {
            finish(limitError(label, "maxPages", limits.maxPages, output.pages.length));
          } else if (characters > limits.maxCharacters) {
            finish(limitError(label, "maxCharacters", limits.maxCharacters, characters));
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
    worker.on("error", (error) => died(error.message, error));
    worker.on("exit", (code) => died(`it exited (code ${code}) before finishing`));
  });
}
