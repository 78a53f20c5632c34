/**
 * Drops undefined values so optional properties stay absent under `exactOptionalPropertyTypes`.
 * @param values an object whose values may be undefined
 * @returns a copy holding only the defined values
 */
export function optional<T extends Record<string, unknown>>(
  values: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) if (value !== undefined) out[key] = value;
  return out as { [K in keyof T]?: Exclude<T[K], undefined> };
}
