/** The hard bounds of PDF extraction and their defaults. */
import { GovernanceError } from "../core/index.js";

/** Bounds that stop an extraction; crossing one terminates the extraction worker. */
export interface PdfLimits {
  /** Largest PDF accepted, checked on the file size before reading. @default 52_428_800 (50 MiB) */
  maxBytes: number;
  /** Most pages a PDF may have. @default 200 */
  maxPages: number;
  /** Most characters of extracted text over all pages, counted as the text arrives. @default 20_000_000 */
  maxCharacters: number;
  /**
   * Memory the extraction may take once pdf.js is loaded: the growth of the process's resident memory
   * (ArrayBuffers included, which a worker's heap cap does not cover), sampled every 25 ms; one
   * compressed stream may inflate to at most half of it. Extractions running at the same time share
   * their budgets. @default 536_870_912 (512 MiB)
   */
  maxMemoryBytes: number;
  /** Wall time of the whole extraction, measured in the parent thread. @default 120_000 */
  timeoutMs: number;
}

/** The default bounds: 50 MiB, 200 pages, 20 M characters, 512 MiB of memory, 120 s. */
export const DEFAULT_PDF_LIMITS: Readonly<PdfLimits> = Object.freeze({
  maxBytes: 50 * 1024 * 1024,
  maxPages: 200,
  maxCharacters: 20_000_000,
  maxMemoryBytes: 512 * 1024 * 1024,
  timeoutMs: 120_000,
});

/**
 * Fills absent bounds with the defaults and checks the given ones.
 * @param limits the caller's bounds (any subset)
 * @returns every bound set
 * @throws GovernanceError `INVALID_INPUT` when a bound is not a positive number
 */
export function resolvePdfLimits(limits: Partial<PdfLimits> = {}): PdfLimits {
  const resolved: PdfLimits = { ...DEFAULT_PDF_LIMITS };
  for (const key of Object.keys(DEFAULT_PDF_LIMITS) as (keyof PdfLimits)[]) {
    const value = limits[key];
    if (value === undefined) continue;
    if (!(typeof value === "number" && Number.isFinite(value) && value > 0)) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `PDF limit ${key} must be a positive number, got ${value}.`,
        {
          data: { limit: key, value },
        },
      );
    }
    resolved[key] = value;
  }
  return resolved;
}
