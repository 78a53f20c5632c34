export { derivedSourceId, deriveManifest } from "./derived-manifest.js";
export {
  builtinManifestDir,
  loadManifestDir,
  loadManifestFile,
  parseManifest,
  validateManifest,
} from "./manifest-loader.js";
export type {
  SourceKind,
  SourceManifest,
  SourceManifestInput,
  SourceSurface,
  SurfacePolicy,
  ToolKind,
  ToolManifest,
} from "./manifest-schema.js";
export { SourceRegistry } from "./source-registry.js";
export {
  isTemplateFilter,
  PLACEHOLDER_PATTERN,
  TEMPLATE_FILTERS,
  type TemplateFilter,
  templatePlaceholders,
} from "./template-placeholders.js";
