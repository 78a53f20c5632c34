/**
 * A third-party server's content blocks, each governed for what it is, never replaced by a placeholder:
 * text stays text (the envelope neutralizes it with every other string), images, audio and embedded
 * binary resources keep their bytes as checked base64 with their decoded size and SHA-256 (the broker
 * stores those bytes in the content store under that hash; the response cap already bounds them),
 * resource links and embedded text resources keep their fields. A block that cannot be kept (base64
 * that does not decode, an unknown type) is dropped with a warning naming it.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { sha256Hex } from "../../core/index.js";

/** A text block. */
export interface GovernedTextBlock {
  type: "text";
  text: string;
}

/** An image or audio block: the bytes as base64, with their size and digest. */
export interface GovernedMediaBlock {
  type: "image" | "audio";
  mimeType: string;
  /** Base64 of the bytes, checked to decode. */
  data: string;
  /** Decoded size in bytes. */
  bytes: number;
  /** SHA-256 of the decoded bytes: the bytes' address in the content store (`sha256:<hex>`). */
  sha256: string;
}

/** A link to a resource of the upstream server, never dereferenced by the gateway. */
export interface GovernedResourceLinkBlock {
  type: "resource_link";
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
}

/** An embedded resource: text, or a blob checked like media. */
export interface GovernedResourceBlock {
  type: "resource";
  resource:
    | { uri: string; mimeType?: string; text: string }
    | { uri: string; mimeType?: string; blob: string; bytes: number; sha256: string };
}

/** One governed content block of a third-party result (`McpToolResult.data.content`). */
export type GovernedContentBlock =
  | GovernedTextBlock
  | GovernedMediaBlock
  | GovernedResourceLinkBlock
  | GovernedResourceBlock;

/** Canonical base64 (RFC 4648 alphabet, padded): what MCP's `data` and `blob` fields carry. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** A MIME type as RFC 6838 restricts its names; anything else is not a type a client can dispatch on. */
const MIME_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;

/**
 * Governs the content blocks of a result without a structured envelope.
 * @param result the tool result as the MCP client returned it (already within the size cap)
 * @returns the kept blocks in their order, and a warning per dropped block
 */
export function governContentBlocks(result: CallToolResult): {
  content: GovernedContentBlock[];
  warnings: string[];
} {
  const content: GovernedContentBlock[] = [];
  const warnings: string[] = [];
  result.content.forEach((block, index) => {
    const kept = governBlock(block as Record<string, unknown>);
    if (typeof kept === "string") warnings.push(`Dropped content block ${index}: ${kept}.`);
    else content.push(kept);
  });
  return { content, warnings };
}

/** The governed block, or why it was dropped. */
function governBlock(block: Record<string, unknown>): GovernedContentBlock | string {
  switch (block.type) {
    case "text":
      return typeof block.text === "string" ? { type: "text", text: block.text } : "its text is not a string";
    case "image":
    case "audio": {
      const mimeType = mimeTypeOf(block.mimeType);
      if (mimeType === undefined) return `its ${block.type} MIME type is not a valid type`;
      const checked = checkedBase64(block.data);
      if (checked === undefined) return `its ${block.type} data is not base64`;
      return {
        type: block.type,
        mimeType,
        data: checked.base64,
        bytes: checked.bytes,
        sha256: checked.sha256,
      };
    }
    case "resource_link": {
      if (typeof block.uri !== "string" || typeof block.name !== "string")
        return "the resource link has no uri or name";
      const link: GovernedResourceLinkBlock = { type: "resource_link", uri: block.uri, name: block.name };
      if (typeof block.title === "string") link.title = block.title;
      if (typeof block.description === "string") link.description = block.description;
      const mimeType = mimeTypeOf(block.mimeType);
      if (mimeType !== undefined) link.mimeType = mimeType;
      if (typeof block.size === "number" && Number.isSafeInteger(block.size) && block.size >= 0)
        link.size = block.size;
      return link;
    }
    case "resource":
      return governResource(block.resource);
    default:
      return `its type ${JSON.stringify(String(block.type)).slice(0, 80)} is not one MCP defines`;
  }
}

function governResource(value: unknown): GovernedResourceBlock | string {
  if (typeof value !== "object" || value === null) return "the embedded resource is not an object";
  const resource = value as Record<string, unknown>;
  if (typeof resource.uri !== "string") return "the embedded resource has no uri";
  const mimeType = mimeTypeOf(resource.mimeType);
  const typed = mimeType === undefined ? {} : { mimeType };
  if (typeof resource.text === "string")
    return { type: "resource", resource: { uri: resource.uri, ...typed, text: resource.text } };
  const checked = checkedBase64(resource.blob);
  if (checked === undefined) return "the embedded resource has neither text nor a base64 blob";
  return {
    type: "resource",
    resource: {
      uri: resource.uri,
      ...typed,
      blob: checked.base64,
      bytes: checked.bytes,
      sha256: checked.sha256,
    },
  };
}

function mimeTypeOf(value: unknown): string | undefined {
  return typeof value === "string" && MIME_TYPE.test(value) ? value.toLowerCase() : undefined;
}

function checkedBase64(value: unknown): { base64: string; bytes: number; sha256: string } | undefined {
  if (typeof value !== "string" || !BASE64.test(value)) return undefined;
  const decoded = Buffer.from(value, "base64");
  return { base64: value, bytes: decoded.length, sha256: sha256Hex(decoded) };
}

/**
 * The binary payloads of a normalized result's governed content, for the content store.
 * @param content `McpToolResult.data.content` of a third-party result (anything else yields nothing)
 * @returns each payload's base64 and SHA-256, in block order
 */
export function binaryPayloads(content: unknown): { base64: string; sha256: string }[] {
  if (!Array.isArray(content)) return [];
  const payloads: { base64: string; sha256: string }[] = [];
  for (const block of content as Partial<GovernedContentBlock>[]) {
    if ((block.type === "image" || block.type === "audio") && "sha256" in block) {
      const media = block as GovernedMediaBlock;
      payloads.push({ base64: media.data, sha256: media.sha256 });
    } else if (block.type === "resource" && block.resource && "blob" in block.resource) {
      payloads.push({ base64: block.resource.blob, sha256: block.resource.sha256 });
    }
  }
  return payloads;
}
