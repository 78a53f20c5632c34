export type { CallTool, CallToolContext, CallToolOutcome } from "./call-tool.js";
export {
  createScienceGovernance,
  type ScienceExtension,
  type ScienceExtensionOptions,
  type ScienceGovernance,
  type ScienceGovernanceOptions,
  scienceExtension,
  withScienceProject,
} from "./create-science-governance.js";
export { type LocalToolsOptions, loadLocalTools } from "./local-tools/load-local-tools.js";
export type { LocalTool } from "./local-tools/local-tool.js";
export { type ProviderKind, providerWarnings, scienceServerConfigs } from "./science-providers.js";
export {
  assertProviderTokens,
  callTimeoutMs,
  loadScienceToml,
  parseScienceToml,
  SCIENCE_TOML_FILE,
  type ScienceProject,
  type ScienceProvider,
  type ScienceRunSettings,
} from "./science-toml.js";
export { isToolError, ToolError } from "./tool-error.js";
export { qualifiedToolName, resolveToolName } from "./tool-resolver.js";
export {
  type ToolDeclaration,
  type ToolUseFailure,
  type ToolUseVerdict,
  toolUseVerified,
} from "./tool-use-verified.js";
export { type ToolUseVerifiedOptions, withToolUseVerified } from "./with-tool-use-verified.js";
export { loadWorkflowDeclarations } from "./workflow-file.js";
