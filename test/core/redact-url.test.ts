import { describe, expect, test } from "vitest";
import { redactUrl, redactUrls } from "../../src/core/redact-url.js";

describe("redactUrl", () => {
  test.each([
    ["https://wiki.example/?token=SECRET", "https://wiki.example/?token=***"],
    ["https://user:pass@host/", "https://***@host/"],
    ["https://user@host:8443/a/b?x=1&y=SECRET#frag", "https://***@host:8443/a/b?x=***&y=***#***"],
    ["http://127.0.0.1:8100", "http://127.0.0.1:8100"],
    ["https://host/path", "https://host/path"],
    ["https://host/?SECRET", "https://host/?***"],
    ["https://host/#access_token=SECRET", "https://host/#***"],
    ["https://host/p@th?k=v", "https://host/p@th?k=***"],
    ["ftp://u:pass@h/?t=SECRET", "ftp://***@h/?t=***"],
    ["not a url?token=SECRET", "not a url?token=***"],
    ["//user:pass@host/x", "//***@host/x"],
  ])("%s -> %s", (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
    expect(redactUrl(expected)).toBe(expected);
  });
});

describe("redactUrl with hidePath", () => {
  test.each([
    ["http://wiki.example/capability-SECRET", "http://wiki.example/***"],
    ["http://wiki.example:8100/capability-SECRET/api/v1?x=1#f", "http://wiki.example:8100/***?x=***#***"],
    ["https://u:p@wiki.example/SECRET", "https://***@wiki.example/***"],
    ["http://127.0.0.1:8100", "http://127.0.0.1:8100"],
    ["http://127.0.0.1:8100/", "http://127.0.0.1:8100/"],
    ["wiki.example/SECRET", "wiki.example/***"],
    ["//host/SECRET", "//host/***"],
  ])("%s -> %s", (url, expected) => {
    expect(redactUrl(url, { hidePath: true })).toBe(expected);
    expect(redactUrl(expected, { hidePath: true })).toBe(expected);
  });
});

describe("redactUrls", () => {
  test("masks every URL in free text and leaves the sentence around it", () => {
    expect(
      redactUrls(
        "fetching 'https://a.example/?token=SECRET' then http://user:pass@b.example:81/x. Done (see https://c.example/doc).",
      ),
    ).toBe(
      "fetching 'https://a.example/?token=***' then http://***@b.example:81/x. Done (see https://c.example/doc).",
    );
  });

  test("text without URLs is unchanged", () => {
    expect(redactUrls("boot failed: missing database")).toBe("boot failed: missing database");
  });
});
