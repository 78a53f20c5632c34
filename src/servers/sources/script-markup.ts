/**
 * Renders the markup of titles and abstracts unambiguously before tags are stripped: `<sup>`/`<sub>`
 * (`10<sup>-8</sup>` → `10⁻⁸`, `CD8<sup>+</sup>` → `CD8⁺`, `BRAF<sup>V600E</sup>` → `BRAF^(V600E)`), MathML, and
 * the spaces older XML lost around inline markup.
 */
import { renderMathml } from "./mathml-text.js";
import { scriptText } from "./unicode-scripts.js";
import { markupText, xmlText } from "./xml-document.js";

/**
 * Replaces every `<sup>…</sup>` and `<sub>…</sub>` (any case, with attributes) by Unicode super/subscript
 * characters when each character has one, else by `^(…)` / `_(…)`; other markup is left for the caller.
 * @param raw inner XML or HTML of a title or abstract (entities not yet decoded)
 * @returns the text with scripts rendered
 */
export function renderScripts(raw: string): string {
  return raw.replace(/<(sup|sub)\b[^>]*>([\s\S]*?)<\/\1\s*>/gi, (_match, tag: string, inner: string) => {
    const text = decode(inner.replace(/<[^>]*>/g, "")).trim();
    return scriptText(text, tag.toLowerCase() === "sup" ? "sup" : "sub");
  });
}

/**
 * Puts back the spaces some older PubMed XML lost around inline markup (`at the<i>TERT</i>gene region`, as
 * NCBI served it in 2018): a space goes between a word and an italic, bold or underlined run of two or more
 * word characters that touches it. A one-letter run inside a word (`p<i>K</i>a`) is left alone.
 * @param raw inner XML or HTML of a title or abstract
 * @returns the markup with the lost spaces restored
 */
export function spaceGluedMarkup(raw: string): string {
  return raw
    .replace(/([\p{L}\p{N}])(<(?:i|b|u|em)\b[^<>]{0,200}>)(?=[\p{L}\p{N}]{2})/giu, "$1 $2")
    .replace(/(?<=[\p{L}\p{N}]{2})(<\/(?:i|b|u|em)\s*>)(?=[\p{L}\p{N}(])/giu, "$1 ");
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
 * The readable text of a markup element or string: MathML rendered (see `renderMathml`), spaces lost around
 * inline markup restored (see `spaceGluedMarkup`), `<sup>`/`<sub>` rendered (see `renderScripts`); other tags
 * removed, entities decoded, whitespace collapsed.
 * @param node a parsed `markupTags` element, or raw markup text
 * @returns the text, or undefined when empty
 */
export function scriptedText(node: unknown): string | undefined {
  const raw = xmlText(node);
  return raw === undefined ? undefined : markupText(renderScripts(spaceGluedMarkup(renderMathml(raw))));
}
