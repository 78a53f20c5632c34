/**
 * `createReplayGovernance`: a `Governance` whose servers and downloads are a research object. The
 * catalog is rebuilt from the crate's tool definitions and manifests, every governed call goes through
 * the same broker (validation, permission, cache, normalization, a ledger row) and is answered with the
 * raw result the crate recorded, downloads get the crate's copies, and anything the crate did not
 * record is refused with `NOT_RECORDED`. An app hands it to its graph in place of `createGovernance`'s.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createGovernance,
  type Governance,
  type GovernanceDownloadOptions,
  type GovernanceOptions,
} from "../runtime/index.js";
import {
  type OpenedResearchObject,
  type OpenResearchObjectLimits,
  openResearchObject,
} from "./crate-files.js";
import { replayServers } from "./replay-catalog.js";
import { createReplayDownloads, createReplayPool, type ReplayEvent } from "./replay-pool.js";
import { readReplayRecording } from "./replay-recording.js";

/** Options of {@link createReplayGovernance}: the crate, and the runtime options a replay keeps. */
export interface ReplayGovernanceOptions
  extends Omit<GovernanceOptions, "config" | "extensions" | "mcp" | "manifests" | "downloads"> {
  /** The research object: its folder or `.zip`, or a crate already opened. */
  crate: string | OpenedResearchObject;
  /** Bounds of opening the crate. */
  crateLimits?: OpenResearchObjectLimits | undefined;
  /**
   * The download deadlines (the replay serves the crate's bytes itself). `storage.dataDir` is where the
   * replay keeps its own ledger, grants, jobs and files (it records every call it makes).
   * @default `storage.dataDir`: a new temporary folder, removed by `close()`
   */
  downloads?: Omit<GovernanceDownloadOptions, "fetch" | "lookup"> | undefined;
}

/** A replay runtime: a `Governance`, plus what the replay served and refused. */
export interface ReplayGovernance extends Governance {
  replay: {
    /** The crate's location. */
    crate: string;
    /** Every governed upstream call of the replay, with the recorded invocation that answered it. */
    readonly events: readonly ReplayEvent[];
  };
}

/**
 * Opens a governed runtime that replays a research object offline.
 * @param options the crate and the runtime options (policy, clock, stores; not servers or fetch)
 * @returns the runtime; `close()` it when done
 * @throws GovernanceError `NOT_FOUND` / `INVALID_INPUT` when the crate is not readable or its tool
 *   catalog is missing or changed; `INVALID_MANIFEST` for a manifest of the crate that does not load
 * @example
 * const governance = await createReplayGovernance({ crate: "agent-demo.zip" });
 * const agent = createGovernedAgent({ model, governance, checkpointer: new MemorySaver() });
 */
export async function createReplayGovernance(options: ReplayGovernanceOptions): Promise<ReplayGovernance> {
  const { crate: given, crateLimits, ...rest } = options;
  const crate = typeof given === "string" ? await openResearchObject(given, crateLimits) : given;
  const recording = await readReplayRecording(crate);
  const ownDataDir = options.storage?.dataDir === undefined;
  const dataDir = options.storage?.dataDir ?? (await mkdtemp(join(tmpdir(), "sciencegate-replay-")));
  try {
    // The crate's manifests govern the replay, as they governed the calls.
    const manifestDir = join(dataDir, "replay-manifests");
    await rm(manifestDir, { recursive: true, force: true });
    await mkdir(manifestDir, { recursive: true });
    for (const [id, text] of recording.manifests) await writeFile(join(manifestDir, `${id}.json`), text);
    const pool = createReplayPool(recording);
    const downloads = createReplayDownloads(recording);
    const governance = await createGovernance({
      ...rest,
      storage: { ...rest.storage, dataDir },
      config: { servers: replayServers(recording.catalog) },
      mcp: { pool },
      manifests: { dirs: [manifestDir], builtin: false },
      downloads: { ...rest.downloads, fetch: downloads.fetch, lookup: downloads.lookup },
    });
    let closing: Promise<void> | undefined;
    return {
      ...governance,
      replay: { crate: crate.location, events: pool.events },
      close: () => {
        closing ??= (async () => {
          try {
            await governance.close();
          } finally {
            await pool.close();
            if (ownDataDir) await rm(dataDir, { recursive: true, force: true });
          }
        })();
        return closing;
      },
    };
  } catch (error) {
    if (ownDataDir) await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}
