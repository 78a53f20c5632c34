export {
  type OpenedResearchObject,
  type OpenResearchObjectLimits,
  openResearchObject,
  researchObjectZip,
  writeResearchObject,
} from "./crate-files.js";
export {
  createReplayGovernance,
  type ReplayGovernance,
  type ReplayGovernanceOptions,
} from "./create-replay-governance.js";
export {
  type ExportResearchObjectOptions,
  exportResearchObject,
  type ResearchObject,
  type ResearchObjectSource,
  type ResearchObjectSummary,
} from "./export-research-object.js";
export type { ReplayEvent } from "./replay-pool.js";
export type { ResearchObjectLedger } from "./session-contents.js";
export {
  type CrateProblem,
  type CrateProblemCode,
  type CrateVerification,
  verifyResearchObject,
} from "./verify-research-object.js";
