/**
 * Worker-thread entry of the PDF extractor: loads pdf.js once, then extracts one file per `extract`
 * message, streaming the text page by page to the parent. It stops itself at the bounds it can see as
 * the data arrives (characters of text, bytes one stream inflates to) and reports them; the parent
 * enforces pages, memory and time, and terminates this thread when any bound is crossed.
 * Never imported by the main thread; `PdfWorkerPool` starts it.
 */
import { parentPort } from "node:worker_threads";
import type { PDFPageProxy } from "pdfjs-dist/legacy/build/pdf.mjs";
import type { PdfWorkerJob, PdfWorkerMemory, PdfWorkerMessage } from "./pdf-worker-messages.js";

/** The fake-worker half of pdf.js, which parses in this thread; typed as a plain module (it ships no types). */
const PDFJS_WORKER: string = "pdfjs-dist/legacy/build/pdf.worker.mjs";

interface TextItemLike {
  str?: string;
  hasEOL?: boolean;
}

function post(message: PdfWorkerMessage): void {
  parentPort?.postMessage(message);
}

/** In a worker thread these figures are this thread's isolate, not the whole process. */
function heldBytes(): number {
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

/** What the worker held once pdf.js was loaded; set before `ready`. */
let loadedBytes = 0;

function memory(): PdfWorkerMemory {
  return { heapGrowthBytes: Math.max(0, heldBytes() - loadedBytes) };
}

/** The bound of the job being extracted; the capped stream reads it when a stream is created. */
const current = { job: 0, maxStreamBytes: 0 };

/**
 * pdf.js inflates FlateDecode streams with the platform's `DecompressionStream` and keeps every chunk
 * until the end, outside the heap cap. This one passes chunks on up to the current job's
 * `maxStreamBytes`, then reports the stream and never finishes it: pdf.js neither holds more nor falls
 * back to its own decoder before the parent ends the thread.
 */
function capDecompression(): void {
  const Native = globalThis.DecompressionStream;
  class CappedDecompressionStream {
    readonly readable: ReadableStream<Uint8Array>;
    readonly writable: WritableStream<Uint8Array>;
    constructor(format: ConstructorParameters<typeof DecompressionStream>[0]) {
      const inner = new Native(format);
      const { job, maxStreamBytes: maxBytes } = current;
      let total = 0;
      this.writable = inner.writable;
      this.readable = inner.readable.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            total += chunk.byteLength;
            if (total <= maxBytes) return controller.enqueue(chunk);
            post({ type: "limit", job, limit: "maxStreamBytes", actual: total });
            return new Promise<void>(() => {}); // stalled until the parent terminates the thread
          },
        }),
      );
    }
  }
  globalThis.DecompressionStream = CappedDecompressionStream as unknown as typeof DecompressionStream;
}

/**
 * The page's text, read as pdf.js streams it; once the document's text crosses `maxCharacters` it
 * reports that to the parent and never settles (the parent ends the thread). Characters count as the parent counts them: the trimmed
 * page text, so the running count only grows and never exceeds the final one.
 */
async function pageText(page: PDFPageProxy, before: number, input: PdfWorkerJob): Promise<string> {
  const reader = page.streamTextContent().getReader();
  let text = "";
  let start = -1; // index of the first non-space character, -1 while there is none
  let end = 0; // index after the last non-space character
  for (;;) {
    const { done, value } = (await reader.read()) as { done: boolean; value?: { items: TextItemLike[] } };
    if (done || !value) return text.trim();
    for (const item of value.items) {
      if (typeof item.str !== "string") continue;
      const piece = item.hasEOL ? `${item.str}\n` : item.str;
      const kept = piece.trimEnd().length;
      if (kept > 0) {
        if (start < 0) start = text.length + piece.length - piece.trimStart().length;
        end = text.length + kept;
      }
      text += piece;
    }
    const characters = before + (start < 0 ? 0 : end - start);
    if (characters > input.maxCharacters) {
      post({ type: "limit", job: input.job, limit: "maxCharacters", actual: characters });
      // Stalled until the parent terminates the thread. Cancelling the reader instead lets pdf.js go on
      // enqueueing into the closed stream, and the worker's uncaught "Controller is already closed" can
      // reach the parent before the limit message, which then reports a crash instead of the limit.
      return new Promise<string>(() => {});
    }
  }
}

type PdfJs = typeof import("pdfjs-dist/legacy/build/pdf.mjs");

async function extract(pdfjs: PdfJs, input: PdfWorkerJob): Promise<void> {
  current.job = input.job;
  current.maxStreamBytes = input.maxStreamBytes;
  const document = await pdfjs.getDocument({
    data: input.data,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
  }).promise;
  try {
    const { job } = input;
    post({ type: "document", job, pageCount: document.numPages, parser: `pdfjs-dist ${pdfjs.version}` });
    let characters = 0;
    for (let n = 1; n <= document.numPages; n++) {
      const page = await document.getPage(n);
      const text = await pageText(page, characters, input);
      characters += text.length;
      post({ type: "page", job, page: n, text });
      page.cleanup();
    }
  } finally {
    await document.destroy();
  }
  post({ type: "done", job: input.job, memory: memory() });
}

async function serve(): Promise<void> {
  // The legacy build is the one that runs on Node 20; loaded here so the main thread never pays for it.
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  // Loaded before `ready` (pdf.js would import it on first use), so the parent's memory budget starts
  // after pdf.js is in memory and counts only what the document makes it allocate.
  (globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = await import(PDFJS_WORKER);
  capDecompression();
  loadedBytes = heldBytes();
  // One file at a time: the parent posts the next job only after `done` or `error`.
  parentPort?.on("message", (input: PdfWorkerJob) => {
    extract(pdfjs, input).catch((error: unknown) => {
      const err = error instanceof Error ? error : new Error(String(error));
      post({ type: "error", job: input.job, message: err.message, name: err.name, memory: memory() });
    });
  });
  post({ type: "ready" });
}

void serve();
