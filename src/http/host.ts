// The Host allow-list (rule: Untrusted agent, untrusted web): the defence against DNS rebinding. A page on
// http://attacker.example:2468 whose name the attacker re-points at 127.0.0.1 is same-origin with
// the daemon as far as the browser is concerned, so CORS never stops it; only the Host header it
// must send ("attacker.example:2468") tells that request from a real client. The check is the
// first onRequest hook, so a refused request runs nothing else: no CORS, no auth, no route.
//
// Accepted: loopback names (localhost, *.localhost, 127.0.0.0/8, [::1]), the --host the daemon
// listens on, and every --allowed-host (exact, or *.suffix for subdomains; * accepts anything).
// On a wildcard listen address (0.0.0.0, ::) every IP literal is accepted too: the machine's
// addresses are what it listens on, they change under containers and DHCP, and an IP-address
// Host cannot be rebound (the browser's origin is then the address itself). The port is ignored:
// rebinding changes the name, not the port, and a proxy or port mapping changes the port honestly.
import { isIP } from 'node:net';
import type { FastifyInstance } from 'fastify';
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

/** The Host header values as sent: Node keeps only the first of several, which hides smuggling. */
function hostHeaders(rawHeaders: string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === 'host') values.push(rawHeaders[i + 1]!);
  }
  return values;
}

/** Installs the check. Call it before any other onRequest hook (CORS, auth) is added. */
export function installHostCheck(app: FastifyInstance, listenHost: string, allowedHosts: readonly string[]): void {
  const policy: HostPolicy = { listen: canonicalHost(listenHost), allowed: allowedHosts.map(canonicalHost) };
  app.addHook('onRequest', async (req) => {
    const values = hostHeaders(req.raw.rawHeaders);
    if (values.length !== 1) {
      throw new ApiError('invalid_request', values.length === 0 ? 'The request has no Host header; send exactly one.' : `The request has ${values.length} Host headers; send exactly one.`);
    }
    const name = hostName(values[0]!);
    if (name === undefined) throw new ApiError('invalid_request', 'The Host header is not a host name or IP address with an optional port.');
    if (!hostAllowed(name, policy)) {
      throw new ApiError(
        'host_not_allowed',
        `This daemon does not answer to the host '${name}' (DNS rebinding protection). If that name is yours, start it with --allowed-host ${name}; see docs/security.md.`,
        { host: name },
      );
    }
  });
}
