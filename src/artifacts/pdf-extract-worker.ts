/**
 * Worker-thread entry of the PDF extractor: parses the bytes with pdf.js and streams the text page by
 * page to the parent. It stops itself at the bounds it can see as the data arrives (characters of
 * text, bytes one stream inflates to) and reports them; the parent enforces pages, memory and time,
 * and terminates this thread when any bound is crossed.
 * Never imported by the main thread; `runPdfWorker` starts it.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { PDFPageProxy } from "pdfjs-dist/legacy/build/pdf.mjs";
import type { PdfWorkerInput, PdfWorkerMessage } from "./pdf-worker-messages.js";

/** The fake-worker half of pdf.js, which parses in this thread; typed as a plain module (it ships no types). */
const PDFJS_WORKER: string = "pdfjs-dist/legacy/build/pdf.worker.mjs";

interface TextItemLike {
  str?: string;
  hasEOL?: boolean;
}

function post(message: PdfWorkerMessage): void {
  parentPort?.postMessage(message);
}

/**
 * pdf.js inflates FlateDecode streams with the platform's `DecompressionStream` and keeps every chunk
 * until the end, outside the heap cap. This one passes chunks on up to `maxBytes`, then reports the
 * stream and never finishes it: pdf.js neither holds more nor falls back to its own decoder before the
 * parent ends the thread.
 */
function capDecompression(maxBytes: number): void {
  const Native = globalThis.DecompressionStream;
  class CappedDecompressionStream {
    readonly readable: ReadableStream<Uint8Array>;
    readonly writable: WritableStream<Uint8Array>;
    constructor(format: ConstructorParameters<typeof DecompressionStream>[0]) {
      const inner = new Native(format);
      let total = 0;
      this.writable = inner.writable;
      this.readable = inner.readable.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            total += chunk.byteLength;
            if (total <= maxBytes) return controller.enqueue(chunk);
            post({ type: "limit", limit: "maxStreamBytes", actual: total });
            return new Promise<void>(() => {}); // stalled until the parent terminates the thread
          },
        }),
      );
    }
  }
  globalThis.DecompressionStream = CappedDecompressionStream as unknown as typeof DecompressionStream;
}

/**
 * The page's text, read as pdf.js streams it, or `undefined` once the document's text crosses
 * `maxCharacters` (reported to the parent). Characters count as the parent counts them: the trimmed
 * page text, so the running count only grows and never exceeds the final one.
 */
async function pageText(
  page: PDFPageProxy,
  before: number,
  maxCharacters: number,
): Promise<string | undefined> {
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
    if (characters > maxCharacters) {
      post({ type: "limit", limit: "maxCharacters", actual: characters });
      await reader.cancel().catch(() => {}); // the parent is ending the thread anyway
      return undefined;
    }
  }
}

async function extract(input: PdfWorkerInput): Promise<void> {
  // The legacy build is the one that runs on Node 20; loaded here so the main thread never pays for it.
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  // Loaded before `ready` (pdf.js would import it on first use), so the parent's memory budget starts
  // after pdf.js is in memory and counts only what the document makes it allocate.
  (globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = await import(PDFJS_WORKER);
  capDecompression(input.maxStreamBytes);
  post({ type: "ready" });
  const document = await pdfjs.getDocument({
    data: input.data,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
  }).promise;
  try {
    post({ type: "document", pageCount: document.numPages, parser: `pdfjs-dist ${pdfjs.version}` });
    let characters = 0;
    for (let n = 1; n <= document.numPages; n++) {
      const page = await document.getPage(n);
      const text = await pageText(page, characters, input.maxCharacters);
      if (text === undefined) return;
      characters += text.length;
      post({ type: "page", page: n, text });
      page.cleanup();
    }
    post({ type: "done" });
  } finally {
    await document.destroy();
  }
}

extract(workerData as PdfWorkerInput).catch((error: unknown) => {
  const err = error instanceof Error ? error : new Error(String(error));
  post({ type: "error", message: err.message, name: err.name });
});
