import { RateLimiter } from "../../../src/governance/rate-limit/index.js";
import { describeRateLimitConformance } from "./rate-limit-conformance.js";

describeRateLimitConformance("RateLimiter (one process)", async (groups) => ({
  limiter: new RateLimiter({ groups }),
  close: async () => {},
}));
