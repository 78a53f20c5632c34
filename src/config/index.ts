export { resolveConfigPath } from "./config-path.js";
export {
  BUNDLED_LLM_WIKI_SERVER_ID,
  BUNDLED_SOURCES_SERVER_ID,
  defaultExtensionsConfigJson,
} from "./default-config.js";
export {
  loadExtensionsConfig,
  parseExtensionsConfig,
  validateExtensionsConfig,
} from "./extensions-config.js";
export { isReservedId, reservedIdMessage } from "./server-id.js";
export type {
  ExtensionsConfig,
  IdentityProviderConfig,
  OAuthConfig,
  ProtocolSetting,
  RoutingConfig,
  ServerConfig,
  TransportKind,
} from "./types.js";
