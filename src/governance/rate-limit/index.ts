export { effectiveRateLimits } from "./effective-rate-limits.js";
export type { RateLimitGroupConfig } from "./rate-limit-config.js";
export type { RateLimitLease } from "./rate-limit-group.js";
export { RateLimiter } from "./rate-limiter.js";
