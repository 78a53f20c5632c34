export type { CallTool, CallToolContext, CallToolOutcome } from "./call-tool.js";
export { createGovernance, type Governance } from "./create-governance.js";
export { resolveDataDir } from "./data-dir.js";
export type { ExtensionTransport, GovernanceExtension } from "./governance-extension.js";
export type { GovernanceOptions } from "./governance-options.js";
export { qualifiedToolName, resolveToolName } from "./tool-resolver.js";
