/**
 * `sciencegate/adk`: the Science ADK as an extension of `createGovernance`: `science.toml` projects,
 * local function tools, qualified tool names, `callTool` and the `tool_use_verified` gate.
 * @example
 * const science = await scienceExtension({ path: "science.toml" });
 * const governance = await createGovernance({ extensions: [science] });
 * const callTool = science.callTool({ governance });
 */

export {
  isToolError,
  resolveToolName,
  scienceExtension,
  ToolError,
  toolUseVerified,
  withToolUseVerified,
} from "../adk/index.js";
