/**
 * Term normalisation for `tool_search`: lowercase, drop function words, fold plurals. MiniSearch
 * does the indexing and BM25 ranking; it leaves stemming to the caller, and requests phrased as
 * sentences ("find papers about …") need these words gone and "variants" to meet "variant".
 */

// Function words only: verbs such as "find" or "get" stay, since they tell search tools from lookups.
const STOP_WORDS = new Set(
  (
    "a about also an and any are as at be by can could do does for from has have how i if in into is it its me my " +
    "of on or our please should so some than that the their them then there these this those to us via we what " +
    "when where which who whose why will with would you your"
  ).split(" "),
);

/**
 * Normalises one token for indexing and querying.
 * @param term a token from the tokenizer
 * @returns the term (lowercased, singular), or `null` for a function word
 */
export function normalizeTerm(term: string): string | null {
  const lower = term.toLowerCase();
  if (lower === "" || STOP_WORDS.has(lower)) return null;
  return singular(lower);
}

/**
 * Folds regular English plurals ("studies" -> "study", "variants" -> "variant"), leaving words
 * such as "analysis", "status" or "class" alone. Query and index fold alike, so an irregular fold
 * (e.g. "species" -> "specie") still matches itself.
 * @param word a lowercase word
 * @returns its singular form
 */
export function singular(word: string): string {
  if (word.length < 4 || /\d/.test(word)) return word;
  if (word.endsWith("ies") && word.length > 4) return `${word.slice(0, -3)}y`;
  if (/(sses|xes|ches|shes)$/.test(word)) return word.slice(0, -2);
  if (word.endsWith("s") && !/(ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}
