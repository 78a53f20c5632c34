/**
 * Which LangGraph thread, and so which governance session, a call belongs to: one rule for every
 * executor (the node set, the governed agent, the middleware, the fixed tool table, the built-in
 * tools, the paper acquisition graph and the Science ADK gate). A session is the thread unless the
 * app's resolver says otherwise; a run without a thread is the `"default"` session. It reads a
 * structural config so that every layer can use it (a LangGraph or tool `RunnableConfig`, and a
 * langchain agent `Runtime`, all fit).
 */

/** Anything that carries LangGraph's `configurable` (a runnable config, an agent runtime). */
export interface ThreadConfig {
  configurable?: Record<string, unknown> | undefined;
}

/** The session of a call that has neither a resolver answer nor a thread. */
export const DEFAULT_SESSION_ID = "default";

/**
 * An id read from a client's config. Some LangGraph clients send numeric thread ids, and an empty
 * string from a client means "not given".
 * @param value the raw `configurable` value
 * @returns a string with a non-blank character as it is, a finite number as its decimal string,
 *   else `undefined` (blank strings, `null`, objects, `NaN`)
 */
export function idOf(value: unknown): string | undefined {
  if (typeof value === "string") return value.trim() === "" ? undefined : value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

/**
 * The LangGraph thread of a call.
 * @param config the call's config (absent outside a graph)
 * @returns `configurable.thread_id` read by {@link idOf}, or `undefined` without a thread
 */
export function threadIdOf(config: ThreadConfig | undefined): string | undefined {
  return idOf(config?.configurable?.thread_id);
}

/**
 * The governance session of a call.
 * @param config the call's config
 * @param resolver the app's resolver; a blank or `undefined` answer defers to the thread
 * @returns the resolver's answer, else the thread ({@link threadIdOf}), else `"default"`
 */
export function sessionIdOf<C extends ThreadConfig>(
  config: C,
  resolver?: ((config: C) => string | undefined) | undefined,
): string {
  return idOf(resolver?.(config)) ?? threadIdOf(config) ?? DEFAULT_SESSION_ID;
}
