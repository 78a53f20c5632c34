export { normalizeToolResult } from "./envelope.js";
export { neutralizeDeep, neutralizePromptTags } from "./prompt-neutralizer.js";
