export { derivedSourceId, deriveManifest } from "./derived-manifest.js";
export {
  builtinManifestDir,
  loadManifestDir,
  loadManifestFile,
  validateManifest,
} from "./manifest-loader.js";
export type { SourceKind, SourceManifest, ToolKind, ToolManifest } from "./manifest-schema.js";
export { SourceRegistry } from "./source-registry.js";
