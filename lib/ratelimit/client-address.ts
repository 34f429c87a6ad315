import { isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';
import { entryOf } from '../values/map-entry.ts';

/** Groups remembered per prefix: past this many, the memo starts again (a client rotating addresses only misses it). */
const MEMO_LIMIT = 10_000;

/** By prefix then address: ipaddr.js parses an IPv6 address in 6-10 µs, a lookup takes 0.1 µs. A pure function's memo, shared by the process. */
const memos = new Map<number, Map<string, string>>();

/**
 * An IPv4 address is one client, IPv4-mapped too; an IPv6 address is the network of its first `ipv6Prefix` bits: a
 * subscriber is given a whole /64 (or more), and would otherwise have 2^64 budgets. A port written after an address is
 * left out. Text that is no address counts as itself.
 */
export function clientGroup(ipv6Prefix: number): (address: string) => string {
  const remembered = entryOf(memos, ipv6Prefix, () => new Map<string, string>());
  return (address) => {
    // Dotted IPv4, as sockets and proxies write it, needs no parsing: the path of most requests.
    if (!address.includes(':')) return address;
    let group = remembered.get(address);
    if (group === undefined) {
      group = networkOf(address, ipv6Prefix);
      if (remembered.size >= MEMO_LIMIT) remembered.clear();
      remembered.set(address, group);
    }
    return group;
  };
}

/**
 * An address followed by the client's port, as some proxies write it in `X-Forwarded-For` (Azure Application Gateway:
 * `203.0.113.9:4711`, `[2001:db8::1]:443`): counted as itself, each port was a budget of its own.
 */
const WITH_PORT = /^(?:(\d{1,3}(?:\.\d{1,3}){3})|\[([0-9A-Fa-f:.]+)\])(?::\d{1,5})?$/;

function networkOf(written: string, ipv6Prefix: number): string {
  const ported = WITH_PORT.exec(written);
  const address = ported === null ? written : (ported[1] ?? ported[2] ?? written);
  if (address !== written && !address.includes(':')) return address;
  // Node's own check first: text that is no address never reaches ipaddr.js's slower patterns.
  if (!isIPv6(address)) return written;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${address}/${ipv6Prefix}`).toString()}/${ipv6Prefix}`;
}
