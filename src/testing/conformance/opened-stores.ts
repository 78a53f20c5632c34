/** The store opener of the conformance suites: every store a test opens is closed after it. */
import { afterEach } from "vitest";

/**
 * Returns `open()`, which makes a store with `factory` (or with the maker it is given, e.g. a reopening)
 * and closes it after the current test; call it inside a `describe` block.
 * @param factory makes a fresh store
 * @returns the opener
 */
export function closingAfterEach<T extends { close(): Promise<void> | void }>(
  factory: () => Promise<T> | T,
): (make?: () => Promise<T> | T) => Promise<T> {
  const opened: T[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });
  return async (make = factory) => {
    const store = await make();
    opened.push(store);
    return store;
  };
}
