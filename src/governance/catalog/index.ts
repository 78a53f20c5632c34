export { type InputIssue, type InputValidation, InputValidator } from "./input-validator.js";
export { inputSchemasCompatible } from "./schema-compat.js";
export { SourceCatalog } from "./source-catalog.js";
export type { CatalogSnapshot, CatalogSource, CatalogTool, SourceStatus } from "./source-catalog-types.js";
