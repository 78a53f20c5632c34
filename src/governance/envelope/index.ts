export {
  binaryPayloads,
  type GovernedContentBlock,
  type GovernedMediaBlock,
  type GovernedResourceBlock,
  type GovernedResourceLinkBlock,
  type GovernedTextBlock,
  governContentBlocks,
} from "./content-blocks.js";
export { normalizeToolResult } from "./envelope.js";
export { neutralizeContentText, neutralizeDeep, neutralizePromptTags } from "./prompt-neutralizer.js";
