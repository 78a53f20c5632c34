export { Broker, type BrokerOptions } from "./broker.js";
export type { InvokeOutcome, InvokeRequest } from "./broker-types.js";
export { ResultCache } from "./result-cache.js";
