/**
 * The plain text of MathML and of inline markup, on hand-written fragments of the shapes PubMed abstracts use
 * (the real abstracts are in literature-markup-real-samples.test.ts).
 */
import { describe, expect, test } from "vitest";
import { renderMathml } from "../../../src/servers/sources/mathml-text.js";
import { scriptedText, spaceGluedMarkup } from "../../../src/servers/sources/script-markup.js";

const math = (body: string) => `<mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML">${body}</mml:math>`;

describe("renderMathml", () => {
  test.each([
    ["a fraction of tokens", "<mml:mfrac><mml:mi>a</mml:mi><mml:mi>b</mml:mi></mml:mfrac>", "a/b"],
    [
      "a fraction of expressions",
      "<mml:mfrac><mml:mrow><mml:mi>x</mml:mi><mml:mo>+</mml:mo><mml:mn>1</mml:mn></mml:mrow><mml:mn>2</mml:mn></mml:mfrac>",
      "(x+1)/2",
    ],
    ["a square root", "<mml:msqrt><mml:mi>n</mml:mi></mml:msqrt>", "√n"],
    ["a cube root", "<mml:mroot><mml:mi>x</mml:mi><mml:mn>3</mml:mn></mml:mroot>", "³√x"],
    [
      "sub and sup",
      "<mml:msubsup><mml:mi>x</mml:mi><mml:mn>2</mml:mn><mml:mn>3</mml:mn></mml:msubsup>",
      "x₂³",
    ],
    [
      "a superscript without Unicode form",
      "<mml:msup><mml:mi>e</mml:mi><mml:mi>kt</mml:mi></mml:msup>",
      "e^(kt)",
    ],
    ["a bar accent", '<mml:mover accent="true"><mml:mi>x</mml:mi><mml:mo>¯</mml:mo></mml:mover>', "x̄"],
    [
      "a fenced list",
      '<mml:mfenced open="[" close="]"><mml:mi>a</mml:mi><mml:mi>b</mml:mi></mml:mfenced>',
      "[a, b]",
    ],
    ["invisible times", "<mml:mn>2</mml:mn><mml:mo>&#x2062;</mml:mo><mml:mi>x</mml:mi>", "2x"],
    [
      "an annotation",
      "<mml:semantics><mml:mi>y</mml:mi><mml:annotation>y</mml:annotation></mml:semantics>",
      "y",
    ],
    [
      "a less-than sign, kept as text",
      "<mml:mi>p</mml:mi><mml:mo>&lt;</mml:mo><mml:mn>0.05</mml:mn>",
      "p&lt;0.05",
    ],
  ])("%s", (_name, body, expected) => {
    expect(renderMathml(`A ${math(body)} B`)).toBe(`A ${expected} B`);
  });

  test("unprefixed <math> and text without math pass through", () => {
    expect(renderMathml('<math xmlns="http://www.w3.org/1998/Math/MathML"><mi>π</mi></math>')).toBe("π");
    expect(renderMathml("no math <i>here</i>")).toBe("no math <i>here</i>");
  });

  test("a malformed island is left as it was", () => {
    const broken = "<mml:math><mml:mi>x</mml:mo></mml:math>";
    expect(renderMathml(broken)).toBe(broken);
  });

  test("a < rendered inside math survives the tag stripping of the text around it", () => {
    expect(scriptedText(`x ${math("<mml:mi>p</mml:mi><mml:mo>&lt;</mml:mo><mml:mn>1</mml:mn>")} y`)).toBe(
      "x p<1 y",
    );
  });
});

describe("spaceGluedMarkup", () => {
  test.each([
    ["at the<i>TERT</i>gene region", "at the <i>TERT</i> gene region"],
    ["SNPs at<i>TERT</i>(linkage", "SNPs at <i>TERT</i> (linkage"],
    ["the <i>TERT</i> gene", "the <i>TERT</i> gene"],
    ["p<i>K</i>a", "p<i>K</i>a"],
    ["<i>E. coli</i>'s growth", "<i>E. coli</i>'s growth"],
    ["(<i>TERT</i>) gene", "(<i>TERT</i>) gene"],
  ])("%s", (raw, expected) => {
    expect(spaceGluedMarkup(raw)).toBe(expected);
  });

  test("<sub>: digits then a word lower only the digits (HbA₁c), as the MathML renderer does", () => {
    expect(scriptedText("HbA<sub>1c</sub> and LE<sub>min</sub>")).toBe("HbA₁c and LE_(min)");
  });
});

describe("hostile text", () => {
  test("many unclosed <math> openings stay linear (a lazy regex over the text would be quadratic)", () => {
    const hostile = "<math>".repeat(50_000) + "x".repeat(200_000);
    const started = process.hrtime.bigint();
    expect(renderMathml(hostile)).toBe(hostile);
    expect(spaceGluedMarkup(`a<i ${"x".repeat(100_000)}`)).toContain("a<i");
    // Generous: the quadratic version takes minutes on this input.
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(4_000);
  });
});
