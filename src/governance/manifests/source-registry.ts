/**
 * The registry of source manifests: built-in ones from `manifests/` plus any folder a user adds.
 * It also resolves the shared rate-limit configuration of sources that name the same group.
 */
import { GovernanceError } from "../../core/index.js";
import type { RateLimitGroupConfig } from "../rate-limit/index.js";
import { listManifestFiles, loadManifestFile, parseManifest } from "./manifest-loader.js";
import type { SourceManifest, SourceManifestInput, ToolManifest } from "./manifest-schema.js";

const DIMENSIONS = [
  ["maxConcurrentRequests", "min"],
  ["minIntervalMs", "max"],
  ["rateLimitPerSecond", "min"],
  ["maxQueueDepth", "min"],
  ["queueTimeoutMs", "min"],
] as const satisfies readonly (readonly [keyof RateLimitGroupConfig, "min" | "max"])[];

/** Options of {@link SourceRegistry.fromDirs}. */
export interface FromDirsOptions {
  /** Which manifests of a folder to register. @default every one */
  include?: ((manifest: SourceManifest, dir: string) => boolean) | undefined;
}

/** Options of one registration. */
export interface RegisterOptions {
  /** Where the manifest came from (a file path), named in duplicate-id errors. */
  origin?: string;
}

/**
 * Source manifests by id.
 * @example
 * const registry = await SourceRegistry.fromDirs([builtinManifestDir(), "./my-manifests"]);
 * registry.get("pubmed").tools.map((t) => t.id);
 */
export class SourceRegistry {
  readonly #sources = new Map<string, { manifest: SourceManifest; origin: string | undefined }>();
  readonly #groups = new Map<string, RateLimitGroupConfig>();
  readonly #groupMembers = new Map<string, string[]>();
  /** Disagreements between manifests of one rate-limit group, and how each was resolved. */
  readonly warnings: string[] = [];

  /**
   * Loads every `*.json` manifest of each folder, in folder order and file-name order.
   * @param dirs manifest folders (for example `[builtinManifestDir(), userDir]`)
   * @param options which manifests to keep (each file is still validated)
   * @returns a registry holding all of them
   * @throws GovernanceError `INVALID_MANIFEST` (file, path, reason), `DUPLICATE_ID` (both files), `INVALID_CONFIG` (unreadable folder)
   */
  static async fromDirs(dirs: readonly string[], options: FromDirsOptions = {}): Promise<SourceRegistry> {
    const registry = new SourceRegistry();
    for (const dir of dirs) {
      for (const file of await listManifestFiles(dir)) {
        const manifest = await loadManifestFile(file);
        if (options.include?.(manifest, dir) === false) continue;
        registry.register(manifest, { origin: file });
      }
    }
    return registry;
  }

  /**
   * Validates and adds a manifest.
   * @param manifest the manifest (validated again, so plain objects from JavaScript are safe)
   * @param options where it came from
   * @returns the validated manifest
   * @throws GovernanceError `INVALID_MANIFEST` when it fails the schema; `DUPLICATE_ID` when its id is taken
   */
  register(manifest: SourceManifestInput | SourceManifest, options: RegisterOptions = {}): SourceManifest {
    const valid = parseManifest(manifest, options.origin);
    const existing = this.#sources.get(valid.id);
    if (existing) {
      const from = (origin: string | undefined) => (origin === undefined ? "" : ` (${origin})`);
      throw new GovernanceError(
        "DUPLICATE_ID",
        `Source id '${valid.id}'${from(options.origin)} is already registered${from(existing.origin)}; give one of them another id.`,
        { data: { id: valid.id, origin: options.origin, existingOrigin: existing.origin } },
      );
    }
    this.#sources.set(valid.id, { manifest: valid, origin: options.origin });
    this.#joinGroup(valid);
    return valid;
  }

  /**
   * @param id a source id
   * @returns the manifest
   * @throws GovernanceError `UNKNOWN_ID` naming the known ids
   */
  get(id: string): SourceManifest {
    const entry = this.#sources.get(id);
    if (entry) return entry.manifest;
    const known = [...this.#sources.keys()].join(", ") || "(none)";
    throw new GovernanceError("UNKNOWN_ID", `Unknown source '${id}'. Known sources: ${known}.`, {
      data: { id, known: [...this.#sources.keys()] },
    });
  }

  /** @returns whether a source with this id is registered */
  has(id: string): boolean {
    return this.#sources.has(id);
  }

  /** @returns every manifest, in registration order */
  list(): SourceManifest[] {
    return [...this.#sources.values()].map((entry) => entry.manifest);
  }

  /**
   * @param sourceId a source id
   * @param toolId a tool id of that source
   * @returns the tool manifest, or `undefined` when the source or tool is unknown
   */
  findTool(sourceId: string, toolId: string): ToolManifest | undefined {
    return this.#sources.get(sourceId)?.manifest.tools.find((tool) => tool.id === toolId);
  }

  /**
   * The resolved limits of every rate-limit group: the stricter value per dimension when the
   * manifests of a group disagree (see `warnings`).
   * @returns group name -> limits (a copy)
   */
  rateLimitGroups(): Map<string, RateLimitGroupConfig> {
    return new Map([...this.#groups].map(([name, config]) => [name, { ...config }]));
  }

  #joinGroup(manifest: SourceManifest): void {
    const name = manifest.governance.rateLimitGroup;
    const members = this.#groupMembers.get(name) ?? [];
    const current = this.#groups.get(name);
    const incoming = limitsOf(manifest);
    members.push(manifest.id);
    this.#groupMembers.set(name, members);
    if (current === undefined) {
      this.#groups.set(name, incoming);
      return;
    }
    const merged: RateLimitGroupConfig = {};
    for (const [dimension, stricter] of DIMENSIONS) {
      const a = current[dimension];
      const b = incoming[dimension];
      // An omitted dimension is unlimited, so any set value is the stricter one.
      const value = a === undefined ? b : b === undefined ? a : Math[stricter](a, b);
      if (value !== undefined) merged[dimension] = value;
      if (a !== b) {
        this.warnings.push(
          `Rate-limit group '${name}': source '${manifest.id}' sets ${dimension} to ${show(b)} but ` +
            `${members
              .slice(0, -1)
              .map((id) => `'${id}'`)
              .join(", ")} set ${show(a)}; using the stricter ${show(value)}.`,
        );
      }
    }
    this.#groups.set(name, merged);
  }
}

function limitsOf(manifest: SourceManifest): RateLimitGroupConfig {
  const limits: RateLimitGroupConfig = {};
  for (const [dimension] of DIMENSIONS) {
    const value = manifest.governance[dimension];
    if (value !== undefined) limits[dimension] = value;
  }
  return limits;
}

function show(value: number | undefined): string {
  return value === undefined ? "unlimited (unset)" : String(value);
}
