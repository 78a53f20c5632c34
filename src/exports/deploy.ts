/**
 * `sciencegate/deploy`: running governed graphs in a long-lived server (the LangGraph API server, or
 * your own): one governance runtime per process, opened on first use and closed on shutdown.
 */

export {
  type ClosableGovernance,
  type GovernanceForProcessOptions,
  governanceForProcess,
  type ProcessGovernance,
  type ShutdownProcess,
  type SignalListener,
} from "../runtime/index.js";
