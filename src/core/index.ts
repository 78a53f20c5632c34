export { canonicalJson, hashCanonical, sha256Hex } from "./canonical-json.js";
export { type Clock, startTimer, systemClock } from "./clock.js";
export {
  GOVERNANCE_ERROR_CODES,
  GovernanceError,
  type GovernanceErrorBody,
  type GovernanceErrorCode,
  type GovernanceErrorOptions,
  isGovernanceError,
  requireGovernanceOption,
  toErrorBody,
} from "./errors.js";
export { atExit } from "./exit-steps.js";
export { InflightCalls } from "./inflight-calls.js";
export {
  isTransientPostgresError,
  migratePostgresSchema,
  openPostgres,
  type PostgresDatabase,
  type PostgresOptions,
  type SqlRunner,
  type SqlValue,
} from "./open-postgres.js";
export { migrateSchema, openSqlite } from "./open-sqlite.js";
export { optional } from "./optional.js";
export type { PostgresListener, PostgresListenHandlers, PostgresListenOptions } from "./postgres-listener.js";
export { checkPrincipal, isPrincipal, MAX_PRINCIPAL_LENGTH, principalOf } from "./principal.js";
export {
  makePrivateDir,
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
  tightenPrivatePath,
  tightenPrivateTree,
  tightenSqliteFiles,
} from "./private-files.js";
export { type RedactUrlOptions, redactUrl, redactUrls } from "./redact-url.js";
export { DEFAULT_SESSION_ID, idOf, sessionIdOf, type ThreadConfig, threadIdOf } from "./thread-id.js";
export {
  type Attributes,
  endSpanWithError,
  errorTypeOf,
  recordingActiveSpan,
  SPAN_ATTRIBUTES,
  SPAN_NAMES,
  type Span,
  SpanKind,
  type SpanOptions,
  setSpanError,
  startSpan,
  TRACER_NAME,
  tracer,
  withActiveSpan,
} from "./tracing.js";
export { PACKAGE_VERSION } from "./version.js";
