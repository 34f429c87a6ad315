import { isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Groups remembered per prefix: past this many, the memo starts again (a client rotating addresses only misses it). */
const MEMO_LIMIT = 10_000;

/**
 * Groups already worked out, by prefix then address: parsing an IPv6 address costs ipaddr.js
 * some 6-10 µs, a lookup 0.1 µs, and a client sends many requests. A memo of a pure function,
 * shared by every service of the process since it holds nothing of any of them.
 */
const memos = new Map<number, Map<string, string>>();

/**
 * The client a per-address limit counts, from the address Koa gives (`ctx.ip`: the socket's, or
 * the X-Forwarded-For entry a trusted proxy appended). An IPv4 address is one client, also when
 * an IPv6 socket writes it IPv4-mapped (`::ffff:203.0.113.9`, in any case or length). An IPv6
 * address is the network of its first `ipv6Prefix` bits (`2001:db8:a:b::/64`): a subscriber is
 * given a whole /64 (or more), and would otherwise have 2^64 budgets. Text that is no address (an
 * odd forwarded entry) counts as itself, as before.
 */
export function clientGroup(ipv6Prefix: number): (address: string) => string {
  let memo = memos.get(ipv6Prefix);
  if (memo === undefined) {
    memo = new Map();
    memos.set(ipv6Prefix, memo);
  }
  const remembered = memo;
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

function networkOf(address: string, ipv6Prefix: number): string {
  // Node's own check first: text that is no address never reaches ipaddr.js's slower patterns.
  if (!isIPv6(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${address}/${ipv6Prefix}`).toString()}/${ipv6Prefix}`;
}
