import { describe, expect, test } from "vitest";
import { inputSchemasCompatible } from "../../../src/governance/catalog/schema-compat.js";

const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  ...extra,
});

describe("inputSchemasCompatible", () => {
  test.each<[string, unknown, unknown]>([
    [
      "identical schemas",
      obj({ q: { type: "string" } }, { required: ["q"] }),
      obj({ q: { type: "string" } }, { required: ["q"] }),
    ],
    [
      "local requires more than remote",
      obj({ q: { type: "string" } }, { required: ["q"] }),
      obj({ q: { type: "string" } }),
    ],
    [
      "local declares a property remote leaves open",
      obj({ q: { type: "string" }, extra: { type: "boolean" } }),
      obj({ q: { type: "string" } }),
    ],
    ["local integer, remote number", obj({ n: { type: "integer" } }), obj({ n: { type: "number" } })],
    [
      "local type is one of remote's types",
      obj({ n: { type: "string" } }),
      obj({ n: { type: ["string", "null"] } }),
    ],
    ["property without a type on one side", obj({ n: {} }), obj({ n: { type: "integer" } })],
    ["remote property schema `true`", obj({ n: { type: "string" } }), obj({ n: true })],
    [
      "array items agree",
      obj({ ids: { type: "array", items: { type: "integer" } } }),
      obj({ ids: { type: "array", items: { type: "number" } } }),
    ],
    [
      "remote additionalProperties:false, local subset",
      obj({ q: { type: "string" } }),
      obj({ q: { type: "string" }, x: { type: "string" } }, { additionalProperties: false }),
    ],
    ["remote has no properties at all", obj({ q: { type: "string" } }), { type: "object" }],
  ])("compatible: %s", (_name, local, remote) => {
    expect(inputSchemasCompatible(local, remote)).toEqual({ compatible: true });
  });

  test.each<[string, unknown, unknown, RegExp]>([
    [
      "top-level types differ",
      { type: "object" },
      { type: "array" },
      /^input: type "object" .* accepts "array"/,
    ],
    [
      "property type differs",
      obj({ q: { type: "string" } }),
      obj({ q: { type: "integer" } }),
      /property "q": type "string" in the manifest, but the server accepts "integer"/,
    ],
    [
      "local number, remote integer",
      obj({ n: { type: "number" } }),
      obj({ n: { type: "integer" } }),
      /property "n": type "number"/,
    ],
    [
      "local allows null, remote does not",
      obj({ n: { type: ["string", "null"] } }),
      obj({ n: { type: "string" } }),
      /\["string", "null"\]/,
    ],
    [
      "remote requires an extra property",
      obj({ q: { type: "string" } }, { required: ["q"] }),
      obj({ q: { type: "string" }, key: { type: "string" } }, { required: ["q", "key"] }),
      /property "key" is required by the server but not by the manifest/,
    ],
    [
      "remote requires what local has as optional",
      obj({ q: { type: "string" } }),
      obj({ q: { type: "string" } }, { required: ["q"] }),
      /property "q" is required by the server/,
    ],
    [
      "remote additionalProperties:false, local property unknown remotely",
      obj({ q: { type: "string" }, sort: { type: "string" } }),
      obj({ q: { type: "string" } }, { additionalProperties: false }),
      /property "sort" .*allows no additional properties/,
    ],
    [
      "nested object property type differs",
      obj({ filter: obj({ year: { type: "string" } }) }),
      obj({ filter: obj({ year: { type: "integer" } }) }),
      /property "filter\.year": type "string"/,
    ],
    [
      "nested object requires more remotely",
      obj({ filter: obj({ year: { type: "integer" } }) }),
      obj({ filter: obj({ year: { type: "integer" } }, { required: ["year"] }) }),
      /property "filter\.year" is required by the server/,
    ],
    [
      "nested closed object",
      obj({ filter: obj({ y: { type: "integer" }, z: { type: "integer" } }) }),
      obj({ filter: obj({ y: { type: "integer" } }, { additionalProperties: false }) }),
      /property "filter\.z" .*no additional properties/,
    ],
    [
      "array items differ",
      obj({ ids: { type: "array", items: { type: "string" } } }),
      obj({ ids: { type: "array", items: { type: "integer" } } }),
      /property "ids\[\]": type "string"/,
    ],
    [
      "array of objects differ inside",
      obj({ rows: { type: "array", items: obj({ a: { type: "boolean" } }) } }),
      obj({ rows: { type: "array", items: obj({ a: { type: "string" } }) } }),
      /property "rows\[\]\.a": type "boolean"/,
    ],
  ])("incompatible: %s", (_name, local, remote, reason) => {
    const result = inputSchemasCompatible(local, remote);
    expect(result.compatible).toBe(false);
    if (result.compatible) return;
    expect(
      result.reasons.some((r) => reason.test(r)),
      result.reasons.join("\n"),
    ).toBe(true);
  });

  test("reports every problem, not only the first", () => {
    const local = obj({ a: { type: "string" }, b: { type: "string" } });
    const remote = obj(
      { a: { type: "integer" }, c: { type: "string" } },
      { required: ["c"], additionalProperties: false },
    );
    const result = inputSchemasCompatible(local, remote);
    expect(result).toEqual({
      compatible: false,
      reasons: [
        'property "c" is required by the server but not by the manifest',
        expect.stringContaining('property "b" is declared in the manifest but the server does not know it'),
        'property "a": type "string" in the manifest, but the server accepts "integer"',
      ],
    });
  });
});
