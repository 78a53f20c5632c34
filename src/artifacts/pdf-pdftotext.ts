/**
 * The `pdftotext` (poppler-utils) extraction backend: the binary run without a shell on the PDF bytes
 * piped to its stdin (never a path it could resolve or follow), its output split into pages at the form
 * feeds it writes after each page, under the same bounds as the pdf.js worker.
 */
import { execFile, spawn } from "node:child_process";
import { constants } from "node:fs";
import { access, readFile } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { type Clock, GovernanceError, systemClock } from "../core/index.js";
import type { PdfLimits } from "./pdf-limits.js";
import type { PdfWorkerOutput } from "./pdf-worker-runner.js";

/** Options of {@link runPdftotext}. */
export interface RunPdftotextOptions {
  /** Absolute path of the `pdftotext` binary (see {@link findPdftotext}). */
  binary: string;
  /** Times the wall-clock bound and the memory samples. @default systemClock */
  clock?: Clock;
  /** A label for error messages (a paper id or file name). */
  label?: string;
}

const MIB = 1024 * 1024;
/** How often the child's resident memory is sampled (Linux `/proc`; elsewhere only time and output bind). */
const MEMORY_SAMPLE_MS = 25;
const STDERR_KEEP = 2048;

/**
 * The first executable `pdftotext` on a search path.
 * @param path the search path @default process.env.PATH
 * @returns its absolute path, or `undefined` when there is none
 */
export async function findPdftotext(path = process.env.PATH ?? ""): Promise<string | undefined> {
  for (const dir of path.split(delimiter)) {
    if (!isAbsolute(dir)) continue; // a relative entry would resolve against whatever the cwd is
    const candidate = join(dir, "pdftotext");
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return undefined;
}

/**
 * Whether a binary can be run, as `extractor: "pdftotext"` needs.
 * @param binary an absolute path
 * @returns true when it exists and is executable
 */
export function isExecutable(binary: string): Promise<boolean> {
  return access(binary, constants.X_OK).then(
    () => true,
    () => false,
  );
}

const versions = new Map<string, Promise<string>>();

/** "pdftotext 22.12.0", read once per binary from `pdftotext -v` (it prints to stderr). */
function parserName(binary: string): Promise<string> {
  let version = versions.get(binary);
  if (!version) {
    version = new Promise((resolve) => {
      execFile(binary, ["-v"], { timeout: 5_000 }, (_error, stdout, stderr) => {
        const found = /pdftotext version (\S+)/.exec(`${stdout}${stderr}`)?.[1];
        resolve(found ? `pdftotext ${found}` : "pdftotext");
      });
    });
    versions.set(binary, version);
  }
  return version;
}

/** Resident memory of a process in bytes from `/proc`, or `undefined` where there is no `/proc`. */
async function residentBytes(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => undefined);
  const kib = status === undefined ? undefined : /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return kib === undefined ? undefined : Number(kib) * 1024;
}

function tooLarge(label: string, limit: keyof PdfLimits, max: number, what: string, data: object) {
  return new GovernanceError(
    "RESPONSE_TOO_LARGE",
    `PDF ${label} exceeds the ${limit} limit: ${what}; extraction stopped.`,
    { data: { limit, max, ...data } },
  );
}

/**
 * Extracts the text of a PDF with `pdftotext` under every bound of `limits` but `maxBytes`, killing
 * the process (SIGKILL) the moment one is crossed: it reads at most `maxPages + 1` pages (`-l`);
 * pages and characters are counted as its output streams in (characters as the pdf.js backend counts
 * them: each page's trimmed text); its output may not exceed half of `maxMemoryBytes`, nor its resident
 * memory `maxMemoryBytes` (sampled every 25 ms where `/proc` exists); wall time is `timeoutMs`.
 * Settles only after the process has exited.
 * @param data the PDF bytes (already checked for size and signature), written to its stdin
 * @param limits the bounds to enforce
 * @param options the binary, clock and label
 * @returns `pdftotext <version>` and the text of every page
 * @throws GovernanceError `RESPONSE_TOO_LARGE` (data.limit `maxPages`, `maxCharacters` or
 *   `maxMemoryBytes`), `TIMEOUT` (data.limit `timeoutMs`), `NORMALIZATION_FAILED` when pdftotext
 *   cannot read the file, cannot be started or dies
 */
export async function runPdftotext(
  data: Uint8Array,
  limits: PdfLimits,
  options: RunPdftotextOptions,
): Promise<PdfWorkerOutput> {
  const clock = options.clock ?? systemClock;
  const label = options.label ?? "document";
  const parser = await parserName(options.binary);
  const maxOutputBytes = Math.floor(limits.maxMemoryBytes / 2);
  // UTF-8 text, Unix line ends, pages 1 to maxPages + 1 (one more says "too many"), stdin to stdout.
  const args = ["-enc", "UTF-8", "-eol", "unix", "-l", String(limits.maxPages + 1), "-", "-"];
  const child = spawn(options.binary, args, { shell: false, stdio: ["pipe", "pipe", "pipe"] });
  const output: PdfWorkerOutput = { parser, pages: [] };
  const timer = new AbortController();
  const decoder = new StringDecoder("utf8");
  let page = ""; // text of the page being written, up to its form feed
  let characters = 0; // trimmed text of the finished pages
  let outputBytes = 0;
  let stderr = "";
  let failure: GovernanceError | undefined;

  return new Promise<PdfWorkerOutput>((resolve, reject) => {
    const stop = (error: GovernanceError) => {
      if (failure) return;
      failure = error;
      child.kill("SIGKILL");
    };
    const addPage = (raw: string) => {
      const text = raw.trim();
      characters += text.length;
      output.pages.push({ page: output.pages.length + 1, text });
      if (output.pages.length > limits.maxPages) {
        const what = `more than ${limits.maxPages} pages (at least ${output.pages.length})`;
        stop(tooLarge(label, "maxPages", limits.maxPages, what, { actual: output.pages.length }));
      }
    };
    const checkCharacters = () => {
      // The untrimmed length bounds the trimmed one from above; trim only when it may matter.
      if (characters + page.length <= limits.maxCharacters) return;
      const actual = characters + page.trim().length;
      if (actual <= limits.maxCharacters) return;
      const what = `more than ${limits.maxCharacters} characters of text (at least ${actual})`;
      stop(tooLarge(label, "maxCharacters", limits.maxCharacters, what, { actual }));
    };
    child.stdout.on("data", (chunk: Buffer) => {
      if (failure) return;
      outputBytes += chunk.length;
      if (outputBytes > maxOutputBytes) {
        const what = `pdftotext wrote more than ${maxOutputBytes} bytes of text, half the budget`;
        stop(tooLarge(label, "maxMemoryBytes", limits.maxMemoryBytes, what, { outputBytes }));
        return;
      }
      const parts = decoder.write(chunk).split("\f");
      page += parts[0] ?? "";
      for (const next of parts.slice(1)) {
        addPage(page);
        page = next;
        if (failure) return;
      }
      checkCharacters();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = `${stderr}${chunk.toString("utf8")}`.slice(-STDERR_KEEP);
    });
    // pdftotext may exit (bad file, a bound) before reading all of its input: that is not an error.
    child.stdin.on("error", () => {});
    child.stdin.end(data);
    clock.sleep(limits.timeoutMs, timer.signal).then(
      () =>
        stop(
          new GovernanceError(
            "TIMEOUT",
            `PDF ${label} exceeds the timeoutMs limit: extraction took longer than ${limits.timeoutMs} ms; stopped.`,
            { retryable: true, data: { limit: "timeoutMs", max: limits.timeoutMs } },
          ),
        ),
      () => {}, // aborted: the process exited first
    );
    const watchMemory = async () => {
      for (;;) {
        await clock.sleep(MEMORY_SAMPLE_MS, timer.signal);
        const rss = child.pid === undefined ? undefined : await residentBytes(child.pid);
        if (rss === undefined) return; // no /proc here, or the process is gone
        if (rss > limits.maxMemoryBytes && !failure) {
          const what = `pdftotext's resident memory reached ${Math.round(rss / MIB)} MiB (budget ${Math.round(limits.maxMemoryBytes / MIB)} MiB)`;
          stop(tooLarge(label, "maxMemoryBytes", limits.maxMemoryBytes, what, { actual: rss }));
        }
      }
    };
    watchMemory().catch(() => {}); // aborted: the process exited
    child.on("error", (error) =>
      stop(
        new GovernanceError(
          "NORMALIZATION_FAILED",
          `Could not run ${options.binary} for PDF ${label}: ${error.message}`,
          {
            cause: error,
          },
        ),
      ),
    );
    child.on("close", (code, signal) => {
      timer.abort();
      if (failure) {
        reject(failure);
        return;
      }
      if (code !== 0) {
        const reason = signal ? `it was killed by ${signal}` : `it exited with code ${code}`;
        const said = stderr.trim().split("\n").slice(-3).join(" ").trim();
        reject(
          new GovernanceError(
            "NORMALIZATION_FAILED",
            `pdftotext could not read PDF ${label}: ${reason}${said ? ` (${said})` : ""}`,
            { data: { exitCode: code, signal } },
          ),
        );
        return;
      }
      page += decoder.end();
      // Every page ends with a form feed; text after the last one is a page only if there is any.
      if (page.trim().length > 0) addPage(page);
      page = "";
      checkCharacters();
      if (failure) reject(failure);
      else resolve(output);
    });
  });
}
