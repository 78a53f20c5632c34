/**
 * Promotion state: which deferred tools the model has loaded in this run, kept in
 * LangGraph state through a reducer channel so it survives checkpoints, interrupts and resumes, and
 * so that parallel `tool_search` calls of one turn all land.
 */
import type { SurfaceTool } from "./surface-tool.js";

/** The promoted tools of a run. */
export interface PromotionState {
  /** Model-visible name -> the tool's definition hash when it was promoted. */
  promoted: Record<string, string>;
  /** The run these promotions belong to. */
  runId?: string | undefined;
}

/** A write to the promotion channel. */
export interface PromotionUpdate {
  /** Names to promote, with the definition hash the model was shown. */
  promote?: Record<string, string> | undefined;
  /** Drop every promotion first (a new run); `promote` in the same update still applies. */
  reset?: boolean | undefined;
  /** Records the run id (with `reset`, the new run's). */
  runId?: string | undefined;
}

/** How long promotions last: one run (a user turn and its interrupts/resumes), or the whole thread. */
export type PromotionScope = "run" | "thread";

/**
 * The empty state, the channel's default.
 * @returns a state with nothing promoted
 */
export function emptyPromotionState(): PromotionState {
  return { promoted: {} };
}

/**
 * The reducer of the promotion channel. It merges, so two `tool_search` calls that run in parallel
 * in one super-step both keep their promotions; `{reset: true, runId}` starts a new run from nothing.
 * Never mutates its inputs.
 * @param left the current state (`undefined` before the first write)
 * @param right the update
 * @returns the next state
 * @example
 * const Promotion = Annotation<PromotionState, PromotionUpdate>({ reducer: promotionReducer, default: emptyPromotionState });
 */
export function promotionReducer(
  left: PromotionState | undefined,
  right: PromotionUpdate | undefined,
): PromotionState {
  const base = left === undefined || right?.reset === true ? emptyPromotionState() : left;
  const runId = right?.runId ?? base.runId;
  const promoted = { ...base.promoted, ...(right?.promote ?? {}) };
  return runId === undefined ? { promoted } : { promoted, runId };
}

/**
 * Builds the update that promotes some tools at their current definitions. Unknown names and tools
 * that are not deferred (always visible anyway) are left out.
 * @param names model-visible names (from `tool_search` results or `autoPromote`)
 * @param tools the session's current tools
 * @returns `{promote: {name: definitionHash}}`
 */
export function promote(names: Iterable<string>, tools: readonly SurfaceTool[]): PromotionUpdate {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const promoted: Record<string, string> = {};
  for (const name of names) {
    const tool = byName.get(name);
    if (tool?.deferred) promoted[name] = tool.definitionHash;
  }
  return { promote: promoted };
}

/**
 * The update to write when a run starts (before the first model call).
 * @param state the checkpointed state (`undefined` on a new thread)
 * @param runId the run's id; an interrupt resume must pass the id of the run it resumes
 * @param scope `run` (default): a new run starts from nothing; `thread`: promotions accumulate
 * @returns `{reset: true, runId}` for a new run, `{runId}` when promotions are kept, or `undefined`
 *   when the state already belongs to this run (a resume keeps what it had)
 */
export function runStartUpdate(
  state: PromotionState | undefined,
  runId: string,
  scope: PromotionScope = "run",
): PromotionUpdate | undefined {
  if (state?.runId === runId) return undefined;
  return scope === "thread" ? { runId } : { reset: true, runId };
}

/**
 * Keyword auto-promotion before the first model call: deferred tools with `routing.mode = prefer`
 * and a keyword that occurs in the user message as a whole word (case-insensitive). Whole words are
 * literal: "protein" does not match "proteins", so manifests list each form they want (pubmed lists
 * both "abstract" and "abstracts"); a hyphen separates words, so "target" matches "off-target".
 * @param userText the user's message
 * @param tools the session's tools
 * @param limit how many to promote @default 3
 * @returns names of the matches, highest priority first, ties by name
 */
export function autoPromote(userText: string, tools: readonly SurfaceTool[], limit = 3): string[] {
  const matches = tools.filter(
    (tool) =>
      tool.deferred &&
      tool.routing.mode === "prefer" &&
      tool.routing.keywords.some((keyword) => containsWord(userText, keyword)),
  );
  return matches
    .sort((a, b) => b.routing.priority - a.routing.priority || compareNames(a.name, b.name))
    .slice(0, Math.max(0, limit))
    .map((tool) => tool.name);
}

/** A promoted tool whose definition changed since its promotion. */
export interface StaleTool {
  name: string;
  reason: string;
}

/**
 * Promoted tools whose definition hash changed since promotion: the model saw another schema, so
 * they count as not promoted until `tool_search` shows them again.
 * @param state the promotion state
 * @param tools the session's current tools
 * @returns the stale tools with a reason, in tool order
 */
export function staleTools(state: PromotionState | undefined, tools: readonly SurfaceTool[]): StaleTool[] {
  const promoted = state?.promoted ?? {};
  return tools
    .filter((tool) => tool.deferred && Object.hasOwn(promoted, tool.name))
    .filter((tool) => promoted[tool.name] !== tool.definitionHash)
    .map((tool) => ({
      name: tool.name,
      reason: "its definition changed since it was loaded; search for it again before calling it",
    }));
}

/**
 * Whether a deferred tool is promoted at its current definition.
 * @param state the promotion state
 * @param tool the tool
 * @returns true when promoted and not stale (always true for a tool that is not deferred)
 */
export function isPromoted(state: PromotionState | undefined, tool: SurfaceTool): boolean {
  if (!tool.deferred) return true;
  const promoted = state?.promoted ?? {};
  return Object.hasOwn(promoted, tool.name) && promoted[tool.name] === tool.definitionHash;
}

function containsWord(text: string, keyword: string): boolean {
  const words = keyword.trim().split(/\s+/).filter(Boolean).map(escapeRegExp);
  if (words.length === 0) return false;
  // Letters, digits and "_" continue a word; anything else (space, punctuation, "-") ends it.
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])${words.join("\\s+")}(?![\\p{L}\\p{N}_])`, "iu");
  return pattern.test(text);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Code-unit order, so the tie-break does not depend on the host's locale. */
function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
