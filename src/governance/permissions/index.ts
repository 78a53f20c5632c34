export type { AuthorizationRequest, Authorize, AuthorizeResult } from "./authorization.js";
export { type Grant, type GrantListOptions, type GrantStore, MemoryGrantStore } from "./grant-store.js";
export type { PendingPermission } from "./pending-permissions.js";
export { ARTIFACT_DOWNLOAD_TOOL_ID } from "./permission-policy.js";
export { createAuthorizationRequest } from "./permission-request.js";
export { PermissionService, type PermissionServiceOptions } from "./permission-service.js";
export {
  type ApprovalMode,
  type IsDangerous,
  PERMISSION_DECISIONS,
  type PermissionCard,
  type PermissionDecision,
  type PermissionDecisionKind,
  type PermissionDecisionSource,
  type PermissionEvaluation,
  type PermissionPolicy,
  type PermissionRisk,
  permissionDecisionSchema,
} from "./permission-types.js";
export { PostgresGrantStore, type PostgresGrantStoreOptions } from "./postgres-grant-store.js";
export {
  PostgresSessionStateStore,
  type PostgresSessionStateStoreOptions,
} from "./postgres-session-state-store.js";
export { SessionSettings, type SessionSettingsOptions } from "./session-settings.js";
export {
  type DecideResult,
  MemorySessionStateStore,
  type PendingEndSource,
  type RecordedDecision,
  type SessionStateEntry,
  type SessionStateStore,
} from "./session-state-store.js";
export { grantStorePath, SqliteGrantStore } from "./sqlite-grant-store.js";
