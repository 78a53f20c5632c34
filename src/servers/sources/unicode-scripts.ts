/**
 * Super- and subscripts as Unicode characters where every character has one, shared by the `<sup>`/`<sub>`
 * and the MathML renderers so that both write the same text for the same script.
 */

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

/** Marks that are only ever raised (GeneReviews®, p†, 37°C): they read the same on the line. */
const TYPOGRAPHIC = /^[®™©*†‡§¶°#]*$/u;

/**
 * A super- or subscript in plain text: Unicode script characters when each character has one (`⁻⁸`, `₂`),
 * a subscript of digits followed by a word with the digits lowered and the word on the line, as
 * `VO₂max` and `HbA₁c` are written, else `^(…)` / `_(…)`.
 * @param text the script's text, entities decoded
 * @param kind `sup` or `sub`
 * @returns the text to put after the base ("" for an empty script)
 */
export function scriptText(text: string, kind: "sup" | "sub"): string {
  const value = text.trim();
  if (value === "" || TYPOGRAPHIC.test(value)) return value;
  const table = kind === "sup" ? SUPERSCRIPT : SUBSCRIPT;
  const mapped = (chars: string) =>
    [...chars].every((char) => table[char] !== undefined)
      ? [...chars].map((char) => table[char]).join("")
      : undefined;
  const whole = mapped(value);
  if (whole !== undefined) return whole;
  const unit = kind === "sub" ? /^(\d+)(\p{L}+)$/u.exec(value) : null;
  if (unit?.[1] && unit[2]) return `${mapped(unit[1])}${unit[2]}`;
  return `${kind === "sup" ? "^" : "_"}(${value})`;
}
