import { describe, expect, it } from 'vitest';
import { embeddedIPv4, embeddedIPv4s, refusalOf } from './addresses.ts';
import { allowListOf, parseAllowHosts } from './allowList.ts';

describe('addresses user code may not reach (SSRF, RFC 6890 special-purpose registries)', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.100.100.200', 'shared (CGNAT)'],
    ['169.254.169.254', 'link-local'],
    ['168.63.129.16', 'metadata'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fd00:ec2::254', 'private'],
    ['fc00::1', 'private'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'multicast'],
    ['[::1]', 'loopback'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(refusalOf(address)).toBe(reason);
  });

  it.each([
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a00:1::1', 'private'],
    ['2002:c0a8:101::', 'private'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::ffff:0:7f00:1', 'loopback'],
    ['::ffff:0:169.254.169.254', 'link-local'],
    ['0:0:0:0:ffff:0:a00:1', 'private'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::c0a8:101', 'private'],
    ['64:ff9b:1::a9fe:a9fe', 'private'],
    ['64:ff9b:1::8.8.8.8', 'private'],
    ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'private'],
    // Teredo: the client's IPv4 is stored inverted (127.0.0.1 -> 80ff:fffe, 169.254.169.254 -> 5601:5601)
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
    ['2001::5601:5601', 'link-local'],
    ['2001:0:0a00:0001::f7f7:f7f7', 'private'],
  ])('refuses the IPv4 an IPv6 address carries: %s (%s)', (address, reason) => {
    expect(refusalOf(address)).toBe(reason);
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '::ffff:0:8.8.8.8',
    '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
  ])('lets %s through', (address) => {
    expect(refusalOf(address)).toBeNull();
  });

  it('refuses what is not an IP address at all', () => {
    expect(refusalOf('localhost')).toBe('reserved');
    expect(refusalOf('1.2.3')).toBe('reserved');
  });

  it('reads the IPv4 of mapped, compatible, NAT64 and 6to4 addresses', () => {
    expect(embeddedIPv4('::ffff:1.2.3.4')).toBe('1.2.3.4');
    expect(embeddedIPv4('0:0:0:0:0:ffff:0102:0304')).toBe('1.2.3.4');
    expect(embeddedIPv4('64:ff9b::1.2.3.4')).toBe('1.2.3.4');
    expect(embeddedIPv4('2002:0102:0304::1')).toBe('1.2.3.4');
    expect(embeddedIPv4('::ffff:0:1.2.3.4')).toBe('1.2.3.4');
    expect(embeddedIPv4s('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toEqual(['192.0.2.45', '65.54.227.120']); // RFC 4380's example
    expect(embeddedIPv4('2606:4700::1111')).toBeNull();
    expect(embeddedIPv4('::1')).toBeNull();
  });
});

describe('the operator allow-list (WORKFLOW_HTTP_ALLOW_HOSTS)', () => {
  it('is empty by default', () => {
    expect(parseAllowHosts(undefined)).toEqual({ entries: [] });
    const allow = allowListOf([]);
    expect(allow.allowsHost('localhost')).toBe(false);
    expect(allow.allowsAddress('127.0.0.1')).toBe(false);
  });

  it('takes host names, *.domains, addresses and CIDR ranges', () => {
    const parsed = parseAllowHosts(' Api.Internal , *.corp.example, 127.0.0.1, 10.1.0.0/16, fd00::/8 ');
    expect(parsed).toEqual({ entries: ['api.internal', '*.corp.example', '127.0.0.1', '10.1.0.0/16', 'fd00::/8'] });
    const allow = allowListOf((parsed as { entries: string[] }).entries);
    expect(allow.allowsHost('API.internal')).toBe(true);
    expect(allow.allowsHost('a.b.corp.example')).toBe(true);
    expect(allow.allowsHost('corp.example')).toBe(false);
    expect(allow.allowsHost('evilcorp.example')).toBe(false);
    expect(allow.allowsHost('api.internal.evil.example')).toBe(false);
    expect(allow.allowsAddress('127.0.0.1')).toBe(true);
    expect(allow.allowsAddress('127.0.0.2')).toBe(false);
    expect(allow.allowsAddress('10.1.200.3')).toBe(true);
    expect(allow.allowsAddress('10.2.0.1')).toBe(false);
    expect(allow.allowsAddress('fd12::1')).toBe(true);
  });

  it('names every entry that is not one', () => {
    expect(parseAllowHosts('ok.example, http://x, 10.0.0.0/33, a b')).toEqual({
      problems: [
        '"http://x" is not a host name, IP address or CIDR range',
        '"10.0.0.0/33" is not a CIDR range',
        '"a b" is not a host name, IP address or CIDR range',
      ],
    });
  });
});
