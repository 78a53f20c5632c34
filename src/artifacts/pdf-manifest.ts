import type { PdfLimits } from "./pdf-limits.js";

/** Version of the `manifest.json` layout; bump it when a field changes meaning. */
export const PDF_MANIFEST_SCHEMA_VERSION = 1;

/** One page's entry in the manifest. */
export interface PdfManifestPage {
  page: number;
  textCharacters: number;
  /** True when the page has no extractable text (a scan or a figure): only a vision model can read it. */
  needsVision: boolean;
}

/** `<outDir>/manifest.json` of one extraction. */
export interface PdfManifest {
  schemaVersion: number;
  /** Parser name and version, e.g. "pdfjs-dist 5.6.205". */
  parser: string;
  /** Hex SHA-256 of the PDF bytes; the idempotency key. */
  inputSha256: string;
  pdfBytes: number;
  pageCount: number;
  textCharacters: number;
  pages: PdfManifestPage[];
  limits: PdfLimits;
  warnings: string[];
}

/** What `buildPdfExtraction` turns into the two output files. */
export interface PdfExtractionInput {
  parser: string;
  inputSha256: string;
  pdfBytes: number;
  limits: PdfLimits;
  pages: readonly { page: number; text: string }[];
}

/**
 * Builds the manifest and the Markdown full text of an extraction.
 * @param input the parser's pages and the facts about the input
 * @returns `fulltext` (a `## Page N` section per page) and the manifest
 */
export function buildPdfExtraction(input: PdfExtractionInput): { fulltext: string; manifest: PdfManifest } {
  const pages = input.pages.map(({ page, text }) => ({
    page,
    textCharacters: text.length,
    needsVision: text.length === 0,
  }));
  const visionPages = pages.filter((p) => p.needsVision).map((p) => p.page);
  const warnings =
    visionPages.length === 0
      ? []
      : [
          `${visionPages.length} of ${pages.length} pages have no extractable text and need vision: ` +
            `page ${visionPages.join(", ")}.`,
        ];
  const sections = input.pages.map(({ page, text }) => {
    const body = text.length === 0 ? "<!-- no extractable text: needs vision -->" : text;
    return `## Page ${page}\n\n${body}\n`;
  });
  const manifest: PdfManifest = {
    schemaVersion: PDF_MANIFEST_SCHEMA_VERSION,
    parser: input.parser,
    inputSha256: input.inputSha256,
    pdfBytes: input.pdfBytes,
    pageCount: pages.length,
    textCharacters: pages.reduce((sum, p) => sum + p.textCharacters, 0),
    pages,
    limits: input.limits,
    warnings,
  };
  return { fulltext: sections.join("\n"), manifest };
}
