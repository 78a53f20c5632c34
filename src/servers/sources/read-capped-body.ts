import { ProviderError } from "./provider-error.js";

/**
 * Reads a response body as UTF-8 text, stopping as soon as it passes `maxBytes` so that an oversized
 * answer is never held in memory whole.
 * @param response the fetch response
 * @param maxBytes the cap in bytes
 * @param host the provider host, for the error message
 * @returns the body text
 * @throws ProviderError `response_too_large` when the declared or streamed size passes the cap
 */
export async function readCappedBody(response: Response, maxBytes: number, host: string): Promise<string> {
  const tooLarge = () =>
    new ProviderError(
      "response_too_large",
      `The answer of ${host} is larger than the ${maxBytes}-byte cap.`,
      {
        status: response.status,
      },
    );
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return new TextDecoder("utf-8").decode(Buffer.concat(chunks, total));
}
