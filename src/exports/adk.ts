/**
 * `sciencegate/adk`: the Science ADK provider model: `science.toml` projects, local function tools,
 * qualified tool names, `callTool` and the `tool_use_verified` gate.
 */

export {
  type CallTool,
  type CallToolContext,
  type CallToolOutcome,
  type LocalTool,
  type LocalToolsOptions,
  loadLocalTools,
  loadScienceToml,
  loadWorkflowDeclarations,
  type ProviderKind,
  parseScienceToml,
  qualifiedToolName,
  resolveToolName,
  type ScienceProject,
  type ScienceProvider,
  type ScienceRunSettings,
  type ToolDeclaration,
  type ToolUseFailure,
  type ToolUseVerdict,
  type ToolUseVerifiedOptions,
  toolUseVerified,
  withToolUseVerified,
} from "../adk/index.js";
