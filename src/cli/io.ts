import type { DownloadFetch, DownloadLookup } from "../artifacts/index.js";
import { guardProcessStderr } from "./terminal-text.js";

/** Where a CLI command reads its environment and writes its output; tests pass their own. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  cwd: string;
  /** Whether stdin is an interactive terminal (approval prompts need one). */
  isTty: boolean;
  /** The HTTP seam of downloads (`jobs retry`); tests serve bytes without network. @default globalThis.fetch */
  fetch?: DownloadFetch;
  /** The DNS seam of downloads' address check; tests resolve without network. @default system lookup */
  lookup?: DownloadLookup;
}

/**
 * The real process's streams and environment. The process's stderr is guarded from here on
 * (`guardProcessStderr`): what any part of Sciencegate writes to it directly is inert too.
 */
export function processIo(): CliIo {
  guardProcessStderr();
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    isTty: Boolean(process.stdin.isTTY),
  };
}

/** A command's exit status: 0 success, 1 the operation failed, 2 usage or configuration error. */
export type ExitCode = 0 | 1 | 2;
