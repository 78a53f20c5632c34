export {
  createGovernance,
  extensionTransports,
  type Governance,
  openSharedSessionState,
} from "./create-governance.js";
export { resolveDataDir } from "./data-dir.js";
export type { ExtensionTransport, GovernanceExtension } from "./governance-extension.js";
export type { GovernanceOptions } from "./governance-options.js";
export { resolveGovernanceConfig } from "./resolve-governance-config.js";
