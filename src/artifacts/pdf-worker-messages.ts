/** The messages between `runPdfWorker` (parent) and the `pdf-extract-worker` thread. */

/** What the parent hands the worker in `workerData`; the PDF bytes come transferred, not copied. */
export interface PdfWorkerInput {
  data: Uint8Array;
}

/** What the worker posts, in order: `document`, one `page` per page, then `done` (or `error` at any point). */
export type PdfWorkerMessage =
  | { type: "document"; pageCount: number; parser: string }
  | { type: "page"; page: number; text: string }
  | { type: "done" }
  | { type: "error"; message: string; name: string };
