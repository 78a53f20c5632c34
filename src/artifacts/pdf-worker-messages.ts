/** The messages between `runPdfWorker` (parent) and the `pdf-extract-worker` thread. */

/** What the parent hands the worker in `workerData`; the PDF bytes come transferred, not copied. */
export interface PdfWorkerInput {
  data: Uint8Array;
  /** Most characters of text over all pages; the worker stops as soon as the text crosses it. */
  maxCharacters: number;
  /** Most bytes one compressed stream may inflate to; the worker stops that stream there. */
  maxStreamBytes: number;
}

/**
 * What the worker posts, in order: `ready` once pdf.js is loaded, `document`, one `page` per page, then
 * `done`; `limit` (a bound the worker saw crossed) or `error` may come at any point.
 */
export type PdfWorkerMessage =
  | { type: "ready" }
  | { type: "document"; pageCount: number; parser: string }
  | { type: "page"; page: number; text: string }
  | { type: "limit"; limit: "maxCharacters" | "maxStreamBytes"; actual: number }
  | { type: "done" }
  | { type: "error"; message: string; name: string };
