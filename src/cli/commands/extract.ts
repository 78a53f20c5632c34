import { basename, extname, resolve } from "node:path";
import { extractPdf, type PdfExtractor } from "../../artifacts/index.js";
import type { CliIo, ExitCode } from "../io.js";
import { terminalLine } from "../terminal-text.js";

/** Options of `sciencegate extract`. */
export interface ExtractCommandOptions {
  /** The PDF file (relative to the working directory). */
  pdf: string;
  /** Output folder. @default ./<pdf name without extension>-extracted */
  out?: string;
  json: boolean;
  /** The parser. @default "auto" (pdftotext when on the PATH, else pdf.js) */
  extractor?: PdfExtractor;
}

/**
 * `sciencegate extract <pdf> [--out DIR] [--extractor auto|pdfjs|pdftotext] [--json]`: the bounded PDF
 * extractor on its own, with the
 * default limits (50 MiB, 200 pages, 20 M characters, 512 MiB of memory, 120 s). Needs no config or MCP server.
 * `--json` prints `{textPath, manifestPath, pageCount, warnings, inputSha256}`.
 * @param io streams and working directory
 * @param options the PDF, output folder and output format
 * @returns 0
 * @throws GovernanceError from `extractPdf` (`INVALID_INPUT` non-PDF, `RESPONSE_TOO_LARGE` a bound, `TIMEOUT`, ...)
 */
export async function extractCommand(io: CliIo, options: ExtractCommandOptions): Promise<ExitCode> {
  const pdfPath = resolve(io.cwd, options.pdf);
  const outDir = resolve(io.cwd, options.out ?? `${basename(pdfPath, extname(pdfPath))}-extracted`);
  const result = await extractPdf(
    { pdfPath, outDir },
    {},
    options.extractor ? { extractor: options.extractor } : {},
  );
  if (options.json) {
    io.stdout(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  }
  io.stdout(terminalLine`Extracted ${result.pageCount} pages of ${options.pdf}\n`);
  io.stdout(terminalLine`  text:     ${result.textPath}\n  manifest: ${result.manifestPath}\n`);
  for (const warning of result.warnings) io.stdout(terminalLine`  warning:  ${warning}\n`);
  return 0;
}
