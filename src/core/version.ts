import { createRequire } from "node:module";

/** The sciencegate package version: MCP client and server info, and the `User-Agent` of provider requests. */
export const PACKAGE_VERSION: string = createRequire(import.meta.url)("../../package.json").version;
