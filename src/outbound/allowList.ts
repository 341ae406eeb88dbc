import { BlockList, isIP } from 'node:net';

/**
 * The operator's exceptions (`WORKFLOW_HTTP_ALLOW_HOSTS`): comma-separated entries, each a host
 * name (`api.internal`, any port), a wildcard of its subdomains (`*.corp.example`), an IP address
 * or a CIDR range (`10.1.0.0/16`). A name entry lets its requests reach whatever it resolves to;
 * an address or range entry lets any name that resolves into it through. Nothing else is allowed
 * past the refused ranges: the default is the empty list.
 */
export interface AllowList {
  /** The host of the URL is allowed whatever it resolves to. */
  allowsHost(hostname: string): boolean;
  /** This resolved address is allowed. */
  allowsAddress(address: string): boolean;
  readonly entries: readonly string[];
}

/** Why an entry is not one; null when it is. */
function entryProblem(entry: string): string | null {
  const [network, prefix, extra] = entry.split('/');
  if (prefix !== undefined && isIP(network!)) {
    const family = isIP(network!);
    const max = family === 4 ? 32 : 128;
    const bits = Number(prefix);
    if (extra !== undefined || !/^\d+$/.test(prefix) || bits > max) return `"${entry}" is not a CIDR range`;
    return null;
  }
  if (isIP(entry.replace(/^\[|\]$/g, ''))) return null;
  return /^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/i.test(entry)
    ? null
    : `"${entry}" is not a host name, IP address or CIDR range`;
}

/** The entries of the variable, or every entry that is not one (for the config error). */
export function parseAllowHosts(text: string | undefined): { entries: string[] } | { problems: string[] } {
  const entries = (text ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const problems = entries.map(entryProblem).filter((p): p is string => p !== null);
  return problems.length ? { problems } : { entries };
}

/** The allow-list of entries that parseAllowHosts accepted. */
export function allowListOf(entries: readonly string[]): AllowList {
  const names = new Set<string>();
  const suffixes: string[] = [];
  const addresses = new BlockList();
  for (const entry of entries) {
    const [network, prefix] = entry.replace(/^\[|\]$/g, '').split('/');
    const family = isIP(network!);
    if (family)
      addresses.addSubnet(
        network!,
        prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix),
        family === 4 ? 'ipv4' : 'ipv6',
      );
    else if (entry.startsWith('*.')) suffixes.push(entry.slice(1).replace(/\.$/, ''));
    else names.add(entry.replace(/\.$/, ''));
  }
  return {
    entries,
    allowsHost(hostname) {
      const host = hostname.toLowerCase().replace(/\.$/, '');
      return names.has(host) || suffixes.some((suffix) => host.endsWith(suffix));
    },
    allowsAddress(address) {
      const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
      const family = isIP(bare);
      return family !== 0 && addresses.check(bare, family === 4 ? 'ipv4' : 'ipv6');
    },
  };
}
