/**
 * Renders `<sup>`/`<sub>` markup of titles and abstracts unambiguously before tags are stripped:
 * `10<sup>-8</sup>` → `10⁻⁸`, `CD8<sup>+</sup>` → `CD8⁺`, `BRAF<sup>V600E</sup>` → `BRAF^(V600E)`.
 */
import { markupText, xmlText } from "./xml-document.js";

const SUPERSCRIPT: Record<string, string> = {
  "0": "⁰",
  "1": "¹",
  "2": "²",
  "3": "³",
  "4": "⁴",
  "5": "⁵",
  "6": "⁶",
  "7": "⁷",
  "8": "⁸",
  "9": "⁹",
  "+": "⁺",
  "-": "⁻",
  "−": "⁻",
  "–": "⁻",
  "=": "⁼",
  "(": "⁽",
  ")": "⁾",
  n: "ⁿ",
  i: "ⁱ",
};
const SUBSCRIPT: Record<string, string> = {
  "0": "₀",
  "1": "₁",
  "2": "₂",
  "3": "₃",
  "4": "₄",
  "5": "₅",
  "6": "₆",
  "7": "₇",
  "8": "₈",
  "9": "₉",
  "+": "₊",
  "-": "₋",
  "−": "₋",
  "=": "₌",
  "(": "₍",
  ")": "₎",
};

const TYPOGRAPHIC = /^[®™©*†‡§¶°#]*$/u;

/**
 * Replaces every `<sup>…</sup>` and `<sub>…</sub>` (any case, with attributes) by Unicode super/subscript
 * characters when each character has one, else by `^(…)` / `_(…)`; other markup is left for the caller.
 * @param raw inner XML or HTML of a title or abstract (entities not yet decoded)
 * @returns the text with scripts rendered
 */
export function renderScripts(raw: string): string {
  return raw.replace(/<(sup|sub)\b[^>]*>([\s\S]*?)<\/\1\s*>/gi, (_match, tag: string, inner: string) => {
    const text = decode(inner.replace(/<[^>]*>/g, "")).trim();
    // Marks that are only ever raised (GeneReviews®, p†, 37°C) read the same on the line.
    if (TYPOGRAPHIC.test(text)) return text;
    const table = tag.toLowerCase() === "sup" ? SUPERSCRIPT : SUBSCRIPT;
    const chars = [...text];
    if (chars.every((char) => table[char] !== undefined)) return chars.map((char) => table[char]).join("");
    return `${tag.toLowerCase() === "sup" ? "^" : "_"}(${text})`;
  });
}

// Enough decoding to map the characters inside a script (numeric entities, &minus;); the caller decodes the
// rest. `<`, `>` and `&` stay encoded so that the caller's tag stripping cannot eat text.
function decode(text: string): string {
  return text.replace(
    /&(?:#x([0-9a-f]+)|#(\d+)|(minus));/gi,
    (entity, hex?: string, dec?: string, minus?: string) => {
      if (minus) return "−";
      const char = String.fromCodePoint(Number.parseInt(hex ?? dec ?? "", hex ? 16 : 10));
      return "<>&".includes(char) ? entity : char;
    },
  );
}

/**
 * The readable text of a markup element or string with `<sup>`/`<sub>` rendered (see `renderScripts`);
 * other tags removed, entities decoded, whitespace collapsed.
 * @param node a parsed `markupTags` element, or raw markup text
 * @returns the text, or undefined when empty
 */
export function scriptedText(node: unknown): string | undefined {
  const raw = xmlText(node);
  return raw === undefined ? undefined : markupText(renderScripts(raw));
}
