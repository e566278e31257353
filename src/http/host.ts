// The Host allow-list (rule: Untrusted agent, untrusted web): the defence against DNS rebinding. A page on
// http://attacker.example:2468 whose name the attacker re-points at 127.0.0.1 is same-origin with
// the daemon as far as the browser is concerned, so CORS never stops it; only the Host header it
// must send ("attacker.example:2468") tells that request from a real client. The check is the
// first thing the request gate (request-gate.ts) does, so a refused request runs nothing else: no
// CORS, no auth, no route.
//
// Accepted: loopback names (localhost, *.localhost, 127.0.0.0/8, [::1]), the --host the daemon
// listens on, and every --allowed-host (exact, or *.suffix for subdomains; * accepts anything).
// On a wildcard listen address (0.0.0.0, ::) every IP literal is accepted too: the machine's
// addresses are what it listens on, they change under containers and DHCP, and an IP-address
// Host cannot be rebound (the browser's origin is then the address itself). The port is ignored:
// rebinding changes the name, not the port, and a proxy or port mapping changes the port honestly.
import { isIP } from 'node:net';
import { ApiError } from '../errors.js';

export interface HostPolicy {
  /** --host, canonical. */
  listen: string;
  /** --allowed-host values, canonical ('*', 'name', or '*.suffix'). */
  allowed: readonly string[];
}

const WILDCARD_LISTEN = new Set(['0.0.0.0', '::']);
// Only the characters a host name or an IP literal can hold: no userinfo, path or whitespace.
const HOST_HEADER = /^(?:\[[0-9a-f:.]+\]|[a-z0-9._~-]+)(?::\d{0,5})?$/i;

/**
 * The canonical name in a Host header (lower case, IPv6 without brackets, no trailing dot, no
 * port), as the WHATWG URL parser browsers use gives it; undefined when it is not a valid host.
 */
export function hostName(header: string): string | undefined {
  if (!HOST_HEADER.test(header)) return undefined;
  let hostname: string;
  try {
    hostname = new URL(`http://${header}`).hostname;
  } catch {
    return undefined;
  }
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  return bare.endsWith('.') ? bare.slice(0, -1) : bare;
}

/** A configured name (--host, --allowed-host) in the form hostName() gives. */
export function canonicalHost(value: string): string {
  if (value === '*' || value.startsWith('*.')) return value.toLowerCase();
  const bracketed = isIP(value) === 6 ? `[${value}]` : value;
  return hostName(bracketed) ?? value.toLowerCase();
}

export function isLoopbackName(name: string): boolean {
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (name === '::1') return true;
  return isIP(name) === 4 && name.startsWith('127.');
}

export function hostAllowed(name: string, policy: HostPolicy): boolean {
  if (isLoopbackName(name) || name === policy.listen) return true;
  if (WILDCARD_LISTEN.has(policy.listen) && isIP(name) !== 0) return true;
  return policy.allowed.some((pattern) => pattern === '*' || pattern === name || (pattern.startsWith('*.') && name.endsWith(pattern.slice(1))));
}

/** How many accepted Host values are remembered: a client sends one or two; the bound keeps a
 *  stream of made-up names from growing the set (they are then checked in full each time). */
const REMEMBERED_HOSTS = 64;

/**
 * The check, built once from the configuration: `(rawHeaders) => refusal or undefined`. It reads
 * the raw headers once, since Node keeps only the first of several Host headers, which would hide
 * smuggling. A Host value once accepted is remembered, so a client's every request after its
 * first costs one scan of the raw headers and one set lookup, not a URL parse.
 */
export function hostCheck(listenHost: string, allowedHosts: readonly string[]): (rawHeaders: string[]) => ApiError | undefined {
  const policy: HostPolicy = { listen: canonicalHost(listenHost), allowed: allowedHosts.map(canonicalHost) };
  const accepted = new Set<string>();
  return (rawHeaders) => {
    let value: string | undefined;
    let count = 0;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!;
      if (name.length === 4 && name.toLowerCase() === 'host') {
        value = rawHeaders[i + 1]!;
        count++;
      }
    }
    if (count === 1 && accepted.has(value!)) return undefined;
    if (count !== 1) {
      return new ApiError('invalid_request', count === 0 ? 'The request has no Host header; send exactly one.' : `The request has ${count} Host headers; send exactly one.`);
    }
    const name = hostName(value!);
    if (name === undefined) return new ApiError('invalid_request', 'The Host header is not a host name or IP address with an optional port.');
    if (!hostAllowed(name, policy)) {
      return new ApiError(
        'host_not_allowed',
        `This daemon does not answer to the host '${name}' (DNS rebinding protection). If that name is yours, start it with --allowed-host ${name}; see docs/security.md.`,
        { host: name },
      );
    }
    if (accepted.size < REMEMBERED_HOSTS) accepted.add(value!);
    return undefined;
  };
}
