/**
 * One `ContentStore` over both places a call's objects can live: the ledger's own objects (small ones,
 * written with their row) and the content store (large ones, and whatever other writers put there).
 */
import { sha256Hex } from "../../core/index.js";
import { type ContentObject, type ContentRef, decodeJson, parseContentRef } from "./content-object.js";
import type { ContentStore } from "./content-store.js";
import type { LedgerObjects, LedgerReader } from "./ledger.js";

/**
 * Reads look in the ledger's objects first, then in the content store; writes go to the content store.
 * Build it with {@link withLedgerObjects}.
 */
export class LedgerContentStore implements ContentStore {
  /** Where writes go and where objects the ledger does not hold are read. */
  readonly files: ContentStore;
  /** The ledger's own objects. */
  readonly objects: LedgerObjects;

  /**
   * @param files the content store
   * @param objects the ledger's objects
   */
  constructor(files: ContentStore, objects: LedgerObjects) {
    this.files = files;
    this.objects = objects;
  }

  put(data: string | Uint8Array): Promise<ContentRef> {
    return this.files.put(data);
  }

  putJson(value: unknown): Promise<ContentRef> {
    return this.files.putJson(value);
  }

  /**
   * Stores an object whose bytes and address are already known, in the content store.
   * @param object bytes and address
   * @returns its address
   */
  putObject(object: ContentObject): Promise<ContentRef> {
    return putObjectIn(this.files, object);
  }

  async get(ref: string): Promise<Uint8Array> {
    return (await this.objects.get(parseContentRef(ref))) ?? this.files.get(ref);
  }

  async getJson<T = unknown>(ref: string): Promise<T> {
    const inline = await this.objects.get(parseContentRef(ref));
    return inline === undefined ? this.files.getJson<T>(ref) : decodeJson<T>(inline, ref);
  }

  async has(ref: string): Promise<boolean> {
    return (await this.objects.get(parseContentRef(ref))) !== undefined || this.files.has(ref);
  }

  async verify(ref: string): Promise<boolean> {
    const sha256 = parseContentRef(ref);
    const inline = await this.objects.get(sha256);
    return inline === undefined ? this.files.verify(ref) : sha256Hex(inline) === sha256;
  }
}

/**
 * The store through which to read what a broker over `ledger` recorded: `store` itself when the
 * ledger keeps no objects, else a `LedgerContentStore` over both (the same one when `store` already is).
 * @param store the content store (the file CAS, or the app's own)
 * @param ledger the ledger
 * @returns the store to read and write objects through
 * @example
 * const store = withLedgerObjects(new FileContentStore(join(dataDir, "cas")), ledger);
 * const result = await store.getJson(row.normalizedRef);
 */
export function withLedgerObjects(store: ContentStore, ledger: Pick<LedgerReader, "objects">): ContentStore {
  const objects = ledger.objects;
  if (objects === undefined) return store;
  if (store instanceof LedgerContentStore && store.objects === objects) return store;
  return new LedgerContentStore(store, objects);
}

/**
 * Stores a prepared object, without hashing it again when the store can take it as it is.
 * @param store any content store
 * @param object bytes and address
 * @returns its address
 */
export function putObjectIn(store: ContentStore, object: ContentObject): Promise<ContentRef> {
  return store.putObject ? store.putObject(object) : store.put(object.bytes);
}

/**
 * Keeps an object for a row about to be appended: one within the ledger's inline limit goes into
 * `inline` (written in the row's own commit), a larger one, or any when the ledger keeps none, is
 * written to the content store now, before the row that names it.
 * @param maxInlineBytes the ledger writer's `maxInlineBytes`
 * @param store the content store of larger objects
 * @param inline the objects to append with the row
 * @param object the object
 * @returns its ref, at once for an object kept inline
 */
export function stageObject(
  maxInlineBytes: number | undefined,
  store: ContentStore,
  inline: ContentObject[],
  object: ContentObject,
): string | Promise<string> {
  if (maxInlineBytes !== undefined && object.size <= maxInlineBytes) {
    inline.push(object);
    return object.ref;
  }
  return putObjectIn(store, object).then(() => object.ref);
}
