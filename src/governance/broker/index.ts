export { Broker, type BrokerOptions } from "./broker.js";
export type {
  InvokeOutcome,
  InvokeRequest,
  RecordedRead,
  RefusedCall,
  UpstreamInput,
  UpstreamQuestion,
} from "./broker-types.js";
export { reusedKeyError } from "./call-replay.js";
export type {
  InProcessCall,
  InProcessHost,
  InProcessRunContext,
  InProcessSource,
  PreparedCall,
} from "./in-process-source.js";
export { ResultCache } from "./result-cache.js";
export { hasUpstreamQuestions, isUpstreamPause, type UpstreamSampler } from "./upstream-input.js";
