export { Broker, type BrokerOptions } from "./broker.js";
export type { InvokeOutcome, InvokeRequest, RefusedCall } from "./broker-types.js";
export { reusedKeyError } from "./call-replay.js";
export { ResultCache } from "./result-cache.js";
