/**
 * Which server ids a config may use. One rule for `mcpServers` keys and `[tools.<id>]` of `science.toml`:
 * ids key maps all the way down (pool, catalog, rate limits), so a name that a plain object already
 * answers (`toString`, `constructor`, `__proto__`) would read a prototype member instead of a server.
 */

/** A valid `mcpServers` id: a letter or digit, then letters, digits, `-` or `_`; at most 64 characters. */
export const SERVER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Every own property name of `Object.prototype` (`__proto__`, `constructor`, `toString`, `valueOf`, ...). */
const RESERVED_IDS: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

/**
 * Whether an id is reserved: it names a member of `Object.prototype`.
 * @param id a server or provider id
 * @returns true for `__proto__`, `constructor`, `toString`, `valueOf`, `hasOwnProperty`, ...
 */
export function isReservedId(id: string): boolean {
  return RESERVED_IDS.has(id);
}

/**
 * The fix for a reserved id, phrased to follow the id's path in a message.
 * @param id the reserved id
 * @returns e.g. `is a reserved name (a member of Object.prototype). Rename the server, e.g. "toString-server".`
 */
export function reservedIdMessage(id: string): string {
  const suggestion = `${id.replace(/^_+|_+$/g, "") || "my"}-server`;
  return `is a reserved name (a member of Object.prototype, which every id-keyed lookup would confuse with the server). Rename the server, e.g. "${suggestion}".`;
}
