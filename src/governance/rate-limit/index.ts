export { effectiveRateLimits } from "./effective-rate-limits.js";
export { PostgresQuotaCounter } from "./postgres-quota-counter.js";
export { PostgresRateLimiter, type PostgresRateLimiterOptions } from "./postgres-rate-limiter.js";
export {
  MemoryQuotaCounter,
  type QuotaAdmission,
  type QuotaCounter,
  QuotaLimiter,
  type QuotaLimiterOptions,
} from "./quota-limiter.js";
export { parseQuotaRules, type QuotaRule, type QuotaWindow } from "./quota-rules.js";
export type { RateLimitGroupConfig } from "./rate-limit-config.js";
export type { RateLimitLease, RateLimitStats } from "./rate-limit-group.js";
export { type RateLimitAcquireOptions, type RateLimitAdmission, RateLimiter } from "./rate-limiter.js";
