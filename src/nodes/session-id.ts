/**
 * Which governance session a graph call belongs to. Model node and tool node must agree, so both
 * resolve it here: the app's resolver, else the LangGraph thread (DESIGN.md §5: a session is a
 * thread unless the app says otherwise).
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";

/** Picks the session id of a graph call from its config. */
export type SessionIdResolver = (config: LangGraphRunnableConfig) => string | undefined;

/** The session of a graph run that has neither a resolver answer nor a `thread_id`. */
export const DEFAULT_SESSION_ID = "default";

/**
 * The session id of a graph call.
 * @param config the node's config
 * @param resolver the app's resolver, if any
 * @returns the resolver's answer, else `configurable.thread_id`, else `"default"`
 */
export function resolveSessionId(config: LangGraphRunnableConfig, resolver?: SessionIdResolver): string {
  return resolver?.(config) ?? threadIdOf(config) ?? DEFAULT_SESSION_ID;
}

/**
 * The LangGraph thread of a graph call.
 * @param config the node's config
 * @returns `configurable.thread_id` as a string, or `undefined` without a checkpointer thread
 */
export function threadIdOf(config: LangGraphRunnableConfig): string | undefined {
  const threadId: unknown = config.configurable?.thread_id;
  return typeof threadId === "string" || typeof threadId === "number" ? String(threadId) : undefined;
}
