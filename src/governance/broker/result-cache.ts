import { LRUCache } from "lru-cache";
import type { McpToolResult } from "../../contract/index.js";
import type { Clock } from "../../core/index.js";
import { hashCanonical, systemClock } from "../../core/index.js";
import type { ContentObject } from "../audit/index.js";
import type { SourceManifest, ToolManifest } from "../manifests/index.js";

/** A cached normalized result and its stored copy (bytes and address). */
export interface CachedResult {
  result: McpToolResult;
  /** The stored object of `result`: a hit's row names it and stores it again (kept once). */
  normalized: ContentObject;
}

/** What identifies one cacheable call. */
export interface ResultCacheKeyParts {
  sourceId: string;
  toolId: string;
  /** The manifest (adapter) version: a new manifest version never serves old entries. */
  version: string;
  /** The validated input. */
  input: Record<string, unknown>;
}

/** Options of `ResultCache`. */
export interface ResultCacheOptions {
  /** Byte budget over the stored (JSON) size of cached results. @default 64 MiB */
  maxBytes?: number;
  /** @default systemClock */
  clock?: Clock;
}

/**
 * The in-memory result cache (lru-cache with TTL and a byte budget). Keys are the SHA-256 of the
 * canonical JSON of source, tool, manifest version and validated input. The broker decides what is
 * cacheable (never private/controlled sources nor tools that are not read-only).
 */
export class ResultCache {
  readonly #lru: LRUCache<string, CachedResult>;

  constructor(options: ResultCacheOptions = {}) {
    const clock = options.clock ?? systemClock;
    this.#lru = new LRUCache<string, CachedResult>({
      maxSize: options.maxBytes ?? 64 * 1024 * 1024,
      sizeCalculation: (entry) => Math.max(1, entry.normalized.size),
      ttlAutopurge: false,
      ttlResolution: 0,
      perf: { now: () => clock.now() },
    });
  }

  /**
   * The cache key of a call.
   * @param parts source, tool, manifest version and validated input
   * @returns hex SHA-256
   */
  static key(parts: ResultCacheKeyParts): string {
    return hashCanonical({
      source: parts.sourceId,
      tool: parts.toolId,
      version: parts.version,
      input: parts.input,
    });
  }

  /** The live entry for `key`, or undefined when absent or expired. */
  get(key: string): CachedResult | undefined {
    return this.#lru.get(key);
  }

  /**
   * Stores an entry for `ttlSeconds`.
   * @param key from `ResultCache.key`
   * @param entry the normalized result and its CAS ref
   * @param ttlSeconds time to live; <= 0 stores nothing
   */
  set(key: string, entry: CachedResult, ttlSeconds: number): void {
    if (ttlSeconds <= 0) return;
    this.#lru.set(key, entry, { ttl: ttlSeconds * 1000 });
  }

  /** Number of live entries. */
  get size(): number {
    return this.#lru.size;
  }

  /** Bytes used by cached results. */
  get bytes(): number {
    return this.#lru.calculatedSize;
  }

  /** Drops every cached result. */
  clear(): void {
    this.#lru.clear();
  }
}

/**
 * How long the broker may cache a tool's results: only read-only tools of public sources, and only
 * when neither the source nor the tool turns caching off.
 * @param source the source manifest (its `cache` settings and data classification)
 * @param tool the tool manifest (`readOnly` and its `cachePolicy`)
 * @returns the time to live in seconds; 0 means do not cache
 */
export function cacheTtlSeconds(source: SourceManifest, tool: ToolManifest): number {
  if (!tool.readOnly || source.governance.dataClassification !== "public") return 0;
  if (!source.cache.enabled || tool.cachePolicy?.enabled === false) return 0;
  return tool.cachePolicy?.ttlSeconds ?? source.cache.ttlSeconds;
}
