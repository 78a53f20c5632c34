export { effectiveRateLimits } from "./effective-rate-limits.js";
export { PostgresRateLimiter, type PostgresRateLimiterOptions } from "./postgres-rate-limiter.js";
export type { RateLimitGroupConfig } from "./rate-limit-config.js";
export type { RateLimitLease, RateLimitStats } from "./rate-limit-group.js";
export { type RateLimitAcquireOptions, type RateLimitAdmission, RateLimiter } from "./rate-limiter.js";
