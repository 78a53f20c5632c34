export {
  createGovernance,
  extensionTransports,
  type Governance,
  openSharedSessionState,
} from "./create-governance.js";
export { resolveDataDir } from "./data-dir.js";
export type { ExtensionTransport, GovernanceExtension } from "./governance-extension.js";
export {
  type ClosableGovernance,
  type GovernanceForProcessOptions,
  governanceForProcess,
  type ProcessGovernance,
  type ShutdownProcess,
  type SignalListener,
} from "./governance-for-process.js";
export {
  type GovernanceDownloadOptions,
  type GovernanceExtractionOptions,
  type GovernanceLimitOptions,
  type GovernanceManifestOptions,
  type GovernanceMcpOptions,
  type GovernanceOptions,
  type GovernancePermissionOptions,
  type GovernanceStorage,
  mergeGovernanceOptions,
} from "./governance-options.js";
export { resolveGovernanceConfig, resolveGovernanceStorage } from "./resolve-governance-config.js";
