/** The messages between the PDF worker pool (parent) and a `pdf-extract-worker` thread. */

/** One file to extract, posted to a ready worker; the PDF bytes come transferred, not copied. */
export interface PdfWorkerJob {
  type: "extract";
  /** Tags every message about this file, so a late message of an earlier file is never mistaken. */
  job: number;
  data: Uint8Array;
  /** Most characters of text over all pages; the worker stops as soon as the text crosses it. */
  maxCharacters: number;
  /** Most bytes one compressed stream may inflate to; the worker stops that stream there. */
  maxStreamBytes: number;
}

/** What the worker's memory holds once a file is finished, for the pool's recycling decision. */
export interface PdfWorkerMemory {
  /**
   * V8 heap in use plus memory held outside it (ArrayBuffers, buffers), in bytes, beyond what the
   * worker held once pdf.js was loaded.
   */
  heapGrowthBytes: number;
}

/**
 * What the worker posts: `ready` once pdf.js is loaded; then, per job, `document`, one `page` per page
 * and `done`; `limit` (a bound the worker saw crossed) or `error` may come at any point of a job.
 * After `done` or `error` the worker waits for the next job.
 */
export type PdfWorkerMessage =
  | { type: "ready" }
  | { type: "document"; job: number; pageCount: number; parser: string }
  | { type: "page"; job: number; page: number; text: string }
  | { type: "limit"; job: number; limit: "maxCharacters" | "maxStreamBytes"; actual: number }
  | { type: "done"; job: number; memory: PdfWorkerMemory }
  | { type: "error"; job: number; message: string; name: string; memory: PdfWorkerMemory };
