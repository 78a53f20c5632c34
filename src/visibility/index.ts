export {
  DEFAULT_DEFERRED_TOOLS_TOKEN_BUDGET,
  type DeferredToolsSectionOptions,
  type DeferredToolsTier,
  renderDeferredToolsSection,
  resolveDeferredToolsSectionOptions,
} from "./deferred-tools-section.js";
export { estimateTokens } from "./estimate-tokens.js";
export {
  autoPromote,
  emptyPromotionState,
  type PromotionScope,
  type PromotionState,
  type PromotionUpdate,
  promote,
  promotionReducer,
  runStartUpdate,
  staleTools,
} from "./promotion.js";
export { deferredToolsPromptSection, routingHintsSection, staleToolsNotice } from "./prompt-sections.js";
export type { SurfaceTool } from "./surface-tool.js";
export { modelVisibleName } from "./tool-names.js";
export { ToolSearchIndex } from "./tool-search.js";
export { createToolSearchTool, promotionFromToolSearchResult, TOOL_SEARCH_NAME } from "./tool-search-tool.js";
export { ToolSurface } from "./tool-surface.js";
export { checkToolCall, visibleToolSchemas, visibleTools } from "./visible-tools.js";
