import { BlockList, isIP, isIPv4 } from 'node:net';

// Which addresses an outbound request from user code (an http_request node, a webhook) may reach.
// A workflow is user code running inside the operator's network: without this list a user could
// read the cloud metadata service (credentials), the database, or anything on loopback (SSRF,
// OWASP A10:2021). The ranges are IANA's special-purpose registries (RFC 6890 and updates).

/** Why an address is refused, in words a run error can show. */
export type RefusalReason =
  'unspecified' | 'loopback' | 'private' | 'shared (CGNAT)' | 'link-local' | 'metadata' | 'multicast' | 'reserved';

const v4: [string, number, RefusalReason][] = [
  ['0.0.0.0', 8, 'unspecified'], // "this network" (RFC 791); 0.0.0.0 reaches loopback on Linux
  ['10.0.0.0', 8, 'private'], // RFC 1918
  ['100.64.0.0', 10, 'shared (CGNAT)'], // RFC 6598; also Alibaba's metadata 100.100.100.200
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'], // RFC 3927; AWS/GCP/Azure/OpenStack metadata 169.254.169.254
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments (RFC 6890)
  ['192.0.2.0', 24, 'reserved'], // documentation (RFC 5737)
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'], // benchmarking (RFC 2544)
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // future use and 255.255.255.255 broadcast
  ['168.63.129.16', 32, 'metadata'], // Azure's wire server: a public address that answers only inside Azure
];

const v6: [string, number, RefusalReason][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'reserved'], // discard-only (RFC 6666)
  ['2001:db8::', 32, 'reserved'], // documentation (RFC 3849)
  ['64:ff9b:1::', 48, 'private'], // local-use NAT64 (RFC 8215): a local translator reaches whatever IPv4 it embeds, at a prefix length we cannot know
  ['fc00::', 7, 'private'], // unique local (RFC 4193); AWS's IPv6 metadata fd00:ec2::254
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'], // deprecated site-local (RFC 3879)
  ['ff00::', 8, 'multicast'],
];

function blockListOf(ranges: [string, number, RefusalReason][], family: 'ipv4' | 'ipv6') {
  const byReason = new Map<RefusalReason, BlockList>();
  for (const [network, prefix, reason] of ranges) {
    const list = byReason.get(reason) ?? new BlockList();
    list.addSubnet(network, prefix, family);
    byReason.set(reason, list);
  }
  return [...byReason];
}

const refusedV4 = blockListOf(v4, 'ipv4');
const refusedV6 = blockListOf(v6, 'ipv6');

/** The 8 16-bit groups of an IPv6 address (a trailing dotted quad included), or null. */
export function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase().replace(/%.*$/, ''); // a zone id (fe80::1%eth0) names no other host
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    if (!isIPv4(quad[1]!)) return null;
    const [a, b, c, d] = quad[1]!.split('.').map(Number) as [number, number, number, number];
    text = text.slice(0, -quad[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return null;
  const groups = [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/**
 * The IPv4 addresses an IPv6 address carries, where the network would deliver it to (or through)
 * those IPv4 hosts: IPv4-mapped (::ffff:a.b.c.d, how a dual-stack socket spells IPv4),
 * IPv4-translated (::ffff:0:a.b.c.d, SIIT, RFC 2765), IPv4-compatible (::a.b.c.d, deprecated),
 * NAT64 (64:ff9b::/96, RFC 6052), 6to4 (2002::/16, RFC 3056) and Teredo (2001::/32, RFC 4380:
 * the client's address, stored inverted, then its server's).
 */
export function embeddedIPv4s(address: string): string[] {
  const g = ipv6Groups(address);
  if (!g) return [];
  const quad = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return [quad(g[6]!, g[7]!)];
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return [quad(g[6]!, g[7]!)];
  if (zeros(0, 6) && (g[6] !== 0 || g[7]! > 1)) return [quad(g[6]!, g[7]!)];
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return [quad(g[6]!, g[7]!)];
  if (g[0] === 0x2002) return [quad(g[1]!, g[2]!)];
  if (g[0] === 0x2001 && g[1] === 0) return [quad(g[6]! ^ 0xffff, g[7]! ^ 0xffff), quad(g[2]!, g[3]!)];
  return [];
}

/** The IPv4 address an IPv6 address delivers to (the first of embeddedIPv4s), or null. */
export function embeddedIPv4(address: string): string | null {
  return embeddedIPv4s(address)[0] ?? null;
}

/** Why user code may not reach this IP address, or null when it may. Not an IP address: 'reserved'. */
export function refusalOf(address: string): RefusalReason | null {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare.replace(/%.*$/, ''));
  if (family === 4) return refusedV4.find(([, list]) => list.check(bare, 'ipv4'))?.[0] ?? null;
  if (family !== 6) return 'reserved';
  for (const inner of embeddedIPv4s(bare)) {
    const reason = refusalOf(inner);
    if (reason) return reason;
  }
  const plain = bare.replace(/%.*$/, '');
  return refusedV6.find(([, list]) => list.check(plain, 'ipv6'))?.[0] ?? null;
}
