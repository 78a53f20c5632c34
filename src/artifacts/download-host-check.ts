/**
 * The address check of a governed download: an allow-listed host name must not resolve to a loopback,
 * private, link-local or otherwise non-public address, or an allowlist entry (or a DNS record an
 * attacker controls) would turn a download into a request to the machine's own network.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { GovernanceError } from "../core/index.js";

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  /** 4 or 6. */
  family: number;
}

/** The DNS seam of downloads: every address a host name resolves to. */
export type DownloadLookup = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** `node:dns/promises` `lookup` with `all: true`: what the system resolver answers. */
export const defaultDownloadLookup: DownloadLookup = (hostname) =>
  dnsLookup(hostname, { all: true, verbatim: true });

/**
 * Which non-public addresses a download may reach anyway: `true` for all, or host names (exact,
 * lowercase), addresses and CIDR ranges (`10.0.0.0/8`, `fd00::/8`).
 */
export type PrivateAddressAllowance = boolean | readonly string[];

// `BlockList` also matches IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) against the IPv4 ranges.
const NON_PUBLIC: ReadonlyArray<readonly [string, number, "ipv4" | "ipv6", string]> = [
  ["0.0.0.0", 8, "ipv4", "unspecified"],
  ["10.0.0.0", 8, "ipv4", "private"],
  ["100.64.0.0", 10, "ipv4", "carrier-grade NAT"],
  ["127.0.0.0", 8, "ipv4", "loopback"],
  ["169.254.0.0", 16, "ipv4", "link-local"],
  ["172.16.0.0", 12, "ipv4", "private"],
  ["192.0.0.0", 24, "ipv4", "IETF protocol"],
  ["192.168.0.0", 16, "ipv4", "private"],
  ["198.18.0.0", 15, "ipv4", "benchmarking"],
  ["224.0.0.0", 4, "ipv4", "multicast"],
  ["240.0.0.0", 4, "ipv4", "reserved"],
  ["::", 128, "ipv6", "unspecified"],
  ["::1", 128, "ipv6", "loopback"],
  ["fe80::", 10, "ipv6", "link-local"],
  ["fec0::", 10, "ipv6", "site-local"],
  ["fc00::", 7, "ipv6", "unique-local"],
  ["ff00::", 8, "ipv6", "multicast"],
];
const RANGES = NON_PUBLIC.map(([network, prefix, type, label]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, type);
  return { list, label };
});

/**
 * The kind of non-public address `address` is.
 * @param address an IPv4 or IPv6 address
 * @returns `loopback`, `private`, `link-local`, … or `undefined` for a public address
 */
export function nonPublicRange(address: string): string | undefined {
  const type = isIP(address) === 6 ? "ipv6" : "ipv4";
  return RANGES.find(({ list }) => list.check(address, type))?.label;
}

/**
 * Resolves a host name and screens every address: what both the address check and the pinned default
 * transport connect through. An IP literal is screened as is, without a lookup.
 * @param lookup the DNS seam
 * @param allowance `allowPrivateAddresses`
 * @returns a screen that resolves to the host's addresses once every one is public or allowed
 * @throws GovernanceError `INVALID_INPUT` for an allowance entry that is no host, address or CIDR;
 *   the screen rejects with `PERMISSION_DENIED` naming host and address when any address is non-public
 *   and not allowed (a host with one public and one private address is refused, not filtered), and
 *   `UPSTREAM_UNAVAILABLE` (retryable) when the name does not resolve
 */
export function createAddressScreen(
  lookup: DownloadLookup,
  allowance: PrivateAddressAllowance = false,
): (hostname: string) => Promise<readonly ResolvedAddress[]> {
  const allows = parseAllowance(allowance);
  return async (hostname) => {
    const addresses = await resolveHost(lookup, hostname);
    if (!allows.host(hostname)) for (const { address } of addresses) screenAddress(hostname, address, allows);
    return addresses;
  };
}

/**
 * Builds the check a transfer runs before each request (the first and every redirect hop).
 * @param lookup the DNS seam
 * @param allowance `allowPrivateAddresses`
 * @returns a check that resolves when every address of the host is public or allowed
 * @throws GovernanceError `INVALID_INPUT` for an allowance entry that is no host, address or CIDR
 */
export function createHostAddressCheck(
  lookup: DownloadLookup,
  allowance: PrivateAddressAllowance = false,
): (hostname: string) => Promise<void> {
  const allows = parseAllowance(allowance);
  const screen = createAddressScreen(lookup, allowance);
  return async (hostname) => {
    if (!allows.host(hostname)) await screen(hostname);
  };
}

interface Allowance {
  host: (hostname: string) => boolean;
  address: (address: string) => boolean;
}

function parseAllowance(allowance: PrivateAddressAllowance): Allowance {
  if (allowance === true) return { host: () => true, address: () => true };
  const hosts = new Set<string>();
  const allowed = new BlockList();
  for (const entry of allowance === false ? [] : allowance) addAllowance(entry, hosts, allowed);
  return {
    host: (hostname) => hosts.has(hostname),
    address: (address) => allowed.check(address, isIP(address) === 6 ? "ipv6" : "ipv4"),
  };
}

async function resolveHost(lookup: DownloadLookup, hostname: string): Promise<readonly ResolvedAddress[]> {
  // A URL keeps an IPv6 literal in brackets; the resolver wants it bare.
  const bare = hostname.startsWith("[") ? hostname.slice(1, -1) : hostname;
  const literal = isIP(bare);
  if (literal !== 0) return [{ address: bare, family: literal }];
  let addresses: readonly ResolvedAddress[];
  try {
    addresses = await lookup(bare);
  } catch (cause) {
    throw new GovernanceError("UPSTREAM_UNAVAILABLE", `Could not resolve host '${hostname}'.`, {
      retryable: true,
      cause,
    });
  }
  if (addresses.length === 0) {
    throw new GovernanceError("UPSTREAM_UNAVAILABLE", `Host '${hostname}' resolves to no address.`, {
      retryable: true,
    });
  }
  return addresses;
}

function screenAddress(hostname: string, address: string, allows: Allowance): void {
  const range = nonPublicRange(address);
  if (range === undefined || allows.address(address)) return;
  throw new GovernanceError(
    "PERMISSION_DENIED",
    `Refused host '${hostname}': it resolves to ${address}, a ${range} address; downloads reach public addresses only. To download from it on purpose, add '${hostname}' or its network to allowPrivateAddresses in the download options.`,
    { data: { host: hostname, address, range } },
  );
}

function addAllowance(entry: string, hosts: Set<string>, allowed: BlockList): void {
  const [network = "", prefix, extra] = entry.trim().split("/");
  const family = isIP(network);
  const bits = prefix === undefined ? (family === 6 ? 128 : 32) : Number(prefix);
  if (family !== 0 && extra === undefined && Number.isInteger(bits) && bits >= 0) {
    if (bits <= (family === 6 ? 128 : 32)) {
      allowed.addSubnet(network, bits, family === 6 ? "ipv6" : "ipv4");
      return;
    }
  } else if (prefix === undefined && /^[a-z0-9.-]+$/i.test(network)) {
    hosts.add(network.toLowerCase());
    return;
  }
  throw new GovernanceError(
    "INVALID_INPUT",
    `allowPrivateAddresses entry '${entry}' is neither a host name, an IP address nor a CIDR range such as 10.0.0.0/8 or fd00::/8.`,
  );
}
