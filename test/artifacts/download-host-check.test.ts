/**
 * The address check of downloads against a real loopback HTTPS publisher: an allow-listed host that
 * resolves to a loopback, private or otherwise non-public address is refused before any connection
 * (on the first request and on a redirect hop), unless `allowPrivateAddresses` lets it through.
 */
import { afterEach, describe, expect, test } from "vitest";
import { createHostAddressCheck, nonPublicRange } from "../../src/artifacts/download-host-check.js";
import type { DownloadManagerOptions } from "../../src/artifacts/download-types.js";
import { systemClock } from "../../src/core/clock.js";
import { createBench, makeCandidate, PDF } from "./download-harness.js";
import { HAS_OPENSSL, type HttpsPublisher, PUBLISHER_HOST, startHttpsPublisher } from "./https-publisher.js";

const INTERNAL_HOST = "internal.test";
const CALL = {
  mcpInvocationId: "inv-1",
  candidateId: "c1",
  sessionId: "s1",
  threadId: "t1",
  toolCallId: "k1",
};

/** A resolver answering `addresses` by host name (the stand-in for DNS). */
const resolver = (addresses: Record<string, string>) => async (hostname: string) => {
  const address = addresses[hostname];
  if (address === undefined) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
  return [{ address, family: address.includes(":") ? 6 : 4 }];
};

describe.skipIf(!HAS_OPENSSL)("downloads refuse hosts that resolve to non-public addresses", () => {
  let publisher: HttpsPublisher | undefined;
  afterEach(async () => {
    await publisher?.close();
    publisher = undefined;
  });

  async function download(path: string, options: Partial<DownloadManagerOptions>) {
    publisher = await startHttpsPublisher({
      "/paper.pdf": (_req, res) => res.writeHead(200, { "content-length": String(PDF.length) }).end(PDF),
      "/hop": (_req, res) => res.writeHead(302, { location: `https://${INTERNAL_HOST}/paper.pdf` }).end(),
    });
    const bench = await createBench([makeCandidate({ url: `https://${PUBLISHER_HOST}${path}` })], {
      hosts: [PUBLISHER_HOST, INTERNAL_HOST],
      fetch: publisher.fetch,
      clock: systemClock,
      ...options,
    });
    const result = await bench.download(CALL);
    return { result, row: await bench.ledger.findByCall("t1", "k1"), publisher };
  }

  test.each([
    ["127.0.0.1", "loopback"],
    ["10.0.0.5", "private"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::1", "loopback"],
    ["169.254.169.254", "link-local"],
    ["fd12::1", "unique-local"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["0.0.0.0", "unspecified"],
  ])(
    "an allow-listed host resolving to %s (%s) is PERMISSION_DENIED without a connection",
    async (address, range) => {
      const { result, row, publisher } = await download("/paper.pdf", {
        lookup: resolver({ [PUBLISHER_HOST]: address }),
      });
      expect(result).toMatchObject({
        status: "failed",
        error: { code: "PERMISSION_DENIED", retryable: false },
      });
      expect(result.error?.message).toContain(`Refused host '${PUBLISHER_HOST}': it resolves to ${address}`);
      expect(result.error?.message).toContain(`a ${range} address`);
      expect(result.error?.message).toContain("allowPrivateAddresses");
      expect(publisher.requests).toHaveLength(0);
      expect(publisher.connections()).toBe(0);
      expect(row).toMatchObject({ status: "error", attempts: 1, error: { code: "PERMISSION_DENIED" } });
    },
  );

  test("a redirect hop to an allow-listed host on a private address is refused before it is requested", async () => {
    const { result, publisher } = await download("/hop", {
      lookup: resolver({ [PUBLISHER_HOST]: "203.0.113.7", [INTERNAL_HOST]: "10.0.0.5" }),
    });
    expect(result).toMatchObject({ status: "failed", error: { code: "PERMISSION_DENIED" } });
    expect(result.error?.message).toContain(`Refused host '${INTERNAL_HOST}': it resolves to 10.0.0.5`);
    expect(publisher.requests.map((request) => request.path)).toEqual(["/hop"]);
  });

  test.each([
    ["true", true],
    ["the host name", [PUBLISHER_HOST]],
    ["its network", ["127.0.0.0/8"]],
  ] as const)("allowPrivateAddresses (%s) lets the loopback publisher through", async (_label, allowance) => {
    const { result, publisher } = await download("/paper.pdf", {
      lookup: resolver({ [PUBLISHER_HOST]: "127.0.0.1" }),
      allowPrivateAddresses: allowance,
    });
    expect(result.status).toBe("completed");
    expect(result.bytesDownloaded).toBe(PDF.length);
    expect(publisher.requests).toHaveLength(1);
  });

  test("an allowed network does not allow another private network", async () => {
    const { result, publisher } = await download("/paper.pdf", {
      lookup: resolver({ [PUBLISHER_HOST]: "10.0.0.5" }),
      allowPrivateAddresses: ["127.0.0.0/8"],
    });
    expect(result.error?.code).toBe("PERMISSION_DENIED");
    expect(publisher.connections()).toBe(0);
  });
});

describe("address classification and allowance entries", () => {
  test.each(["8.8.8.8", "203.0.113.7", "2606:4700::1111", "::ffff:8.8.8.8"])("%s is public", (address) => {
    expect(nonPublicRange(address)).toBeUndefined();
  });

  test.each(["10.0.0.0/40", "fd00::/200", "not a host!", "1.2.3.4/8/9"])(
    "allowPrivateAddresses entry %s is INVALID_INPUT naming it",
    (entry) => {
      expect(() => createHostAddressCheck(async () => [], [entry])).toThrow(
        expect.objectContaining({ code: "INVALID_INPUT", message: expect.stringContaining(entry) }),
      );
    },
  );
});
