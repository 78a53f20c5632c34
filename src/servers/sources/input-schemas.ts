/**
 * Shared zod pieces of tool input schemas. Optional inputs go through `optionalInput`, so that an empty
 * string (or null) from a client counts as absent, as the broker does.
 */
import { z } from "zod";
import { isBlank } from "./identifiers.js";

const blankToUndefined = (value: unknown) => (isBlank(value) ? undefined : value);

/**
 * An optional input where blank means absent. Its JSON Schema is the inner schema's (not required).
 * @param schema the inner schema
 * @returns the optional schema
 */
export function optionalInput<T extends z.ZodType>(schema: T) {
  return z.preprocess(blankToUndefined, schema.optional());
}

/**
 * An input with a default, where blank means absent (so the default applies).
 * @param schema the inner schema
 * @param value the default
 * @returns the schema; its JSON Schema carries `default`
 */
export function defaultedInput<T extends z.ZodType>(schema: T, value: z.util.NoUndefined<z.output<T>>) {
  return z.preprocess(blankToUndefined, schema.default(value as never));
}

/**
 * A free-text search query (required, 1–1000 characters, trimmed).
 * @param description what the query searches and its syntax
 * @returns the schema
 */
export function queryInput(description: string) {
  return z.string().trim().min(1).max(1000).describe(description);
}

/**
 * How many results to return.
 * @param defaultValue the default
 * @param max the maximum the provider allows per page
 * @returns the schema
 */
export function maxResultsInput(defaultValue: number, max: number) {
  return defaultedInput(z.number().int().min(1).max(max), defaultValue).describe(
    `Number of results to return (1-${max}, default ${defaultValue}).`,
  );
}

/**
 * Zero-based offset of the first result (use `data.nextStart` of the previous page).
 * @param max the deepest offset the provider serves
 * @returns the schema
 */
export function startInput(max: number) {
  return optionalInput(z.number().int().min(0).max(max)).describe(
    `Zero-based offset of the first result, for paging (0-${max}, default 0); pass data.nextStart of the previous page.`,
  );
}

/** Result order shared by literature searches: provider relevance, or newest first. */
export const sortInput = optionalInput(z.enum(["relevance", "date"])).describe(
  "Result order: relevance (default) or date (newest first).",
);

/**
 * A batch of identifiers.
 * @param max the most identifiers per call
 * @param description which identifiers and forms are accepted
 * @returns the schema
 */
export function idListInput(max: number, description: string) {
  return z.array(z.string().trim().min(1)).min(1).max(max).describe(description);
}
