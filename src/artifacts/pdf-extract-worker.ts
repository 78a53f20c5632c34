/**
 * Worker-thread entry of the PDF extractor: parses the bytes with pdf.js and streams the text page by
 * page to the parent, which enforces every bound and terminates this thread when one is crossed.
 * Never imported by the main thread; `runPdfWorker` starts it.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { PdfWorkerInput, PdfWorkerMessage } from "./pdf-worker-messages.js";

interface TextItemLike {
  str?: string;
  hasEOL?: boolean;
}

function post(message: PdfWorkerMessage): void {
  parentPort?.postMessage(message);
}

function pageText(items: readonly TextItemLike[]): string {
  let text = "";
  for (const item of items) {
    if (typeof item.str !== "string") continue;
    text += item.str;
    if (item.hasEOL) text += "\n";
  }
  return text.trim();
}

async function extract(input: PdfWorkerInput): Promise<void> {
  // The legacy build is the one that runs on Node 20; loaded here so the main thread never pays for it.
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  const document = await pdfjs.getDocument({
    data: input.data,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
  }).promise;
  try {
    post({ type: "document", pageCount: document.numPages, parser: `pdfjs-dist ${pdfjs.version}` });
    for (let n = 1; n <= document.numPages; n++) {
      const page = await document.getPage(n);
      const content = await page.getTextContent();
      post({ type: "page", page: n, text: pageText(content.items as TextItemLike[]) });
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
