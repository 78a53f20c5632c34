/**
 * `sciencegate/research-object`: a session as a research object (an RO-Crate 1.1 folder or zip): export
 * it, verify it from the crate alone, and replay an agent's graph against it offline.
 */
export {
  createReplayGovernance,
  exportResearchObject,
  openResearchObject,
  researchObjectZip,
  verifyResearchObject,
  writeResearchObject,
} from "../research-object/index.js";
