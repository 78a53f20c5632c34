/** Where Sciencegate keeps its embedded state (ledger, content store, grants, jobs). */
import { resolve } from "node:path";

/** Options of {@link resolveDataDir}. */
export interface ResolveDataDirOptions {
  /** An explicit data directory; wins over the environment. Relative paths resolve against `cwd`. */
  dataDir?: string;
  /** Environment to read `SCIENCEGATE_HOME` from. @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
  /** Directory that relative paths and the default resolve against. @default process.cwd() */
  cwd?: string;
}

/**
 * The absolute data directory: the explicit `dataDir` option, else `SCIENCEGATE_HOME`, else
 * `<cwd>/.sciencegate`. Empty strings count as absent, so `SCIENCEGATE_HOME=` falls back to the default.
 * The directory is not created here; each store creates what it needs on first write.
 * @param options explicit directory, environment and working directory
 * @returns an absolute path
 * @example
 * const cas = new FileContentStore(join(resolveDataDir(), "cas"));
 */
export function resolveDataDir(options: ResolveDataDirOptions = {}): string {
  const cwd = resolve(options.cwd ?? process.cwd());
  const env = options.env ?? process.env;
  const chosen = nonEmpty(options.dataDir) ?? nonEmpty(env.SCIENCEGATE_HOME) ?? ".sciencegate";
  return resolve(cwd, chosen);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
