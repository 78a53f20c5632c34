/**
 * A tokenizer-free token estimate for prompt budgets. Exact counts need the model's own tokenizer
 * (a large table per model family); a budget only needs a stable, slightly pessimistic estimate.
 */

/** A letter run costs one token per this many letters (rounded up). */
const LETTERS_PER_TOKEN = 7;
const PIECE = /[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d{1,3}|[^ \tA-Za-z\d]/g;

/**
 * Estimates how many tokens a text costs a current BPE tokenizer: one per started run of seven
 * letters (a capital starts a new run), one per group of up to three digits, one per newline or other symbol; spaces are free.
 * On tool names, one-line summaries and source lines it over-counts o200k by 1–30 % (measured in
 * `test/visibility/estimate-tokens.test.ts`); on made-up words that split into many tokens it may
 * under-count by a few per cent.
 * @param text any text
 * @returns the estimate, 0 for an empty text
 * @example estimateTokens("mcp__pubmed__search: Search PubMed.") // 12 (o200k: 12)
 */
export function estimateTokens(text: string): number {
  let tokens = 0;
  for (const [piece] of text.matchAll(PIECE)) {
    const lower = piece.charCodeAt(0) | 0x20;
    tokens += lower >= 0x61 && lower <= 0x7a ? Math.ceil(piece.length / LETTERS_PER_TOKEN) : 1;
  }
  return tokens;
}
