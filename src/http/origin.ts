// The Origin check (rule: Untrusted agent, untrusted web): no cross-origin writes, ever. A page on another origin can send
// requests to 127.0.0.1:2468 that need no preflight: fetch(url, {method: 'POST', mode: 'no-cors'}),
// a form, sendBeacon, an <img>. CORS only stops the page from reading the answer; the request still
// runs (a session terminated, a permission denied by /interrupt, an npm install started). Browsers
// name the page that sent such a request in `Origin` (every POST, every CORS-mode request) or at
// least say it came from elsewhere (`Sec-Fetch-Site`), so the daemon refuses it before it runs.
//
// Accepted: no Origin and no cross-origin Sec-Fetch-Site (curl, backends, the client in Node); the
// daemon's own origin (the inspector it serves: Origin's host:port is the request's Host, which the
// Host check before this one has already vetted against DNS rebinding), http or https alike, since
// behind a TLS proxy the page is https and the daemon sees the proxy's forwarded Host; each
// --cors-origin. `--cors-origin '*'` installs nothing: any page may call, the token is the guard.
// One exception without an Origin: a top-level navigation (a link to the inspector from another
// page) to a public page (auth class `public`, auth.ts: `/`, `/ui/…`, `/docs`), which is a GET that
// serves the same static files to everyone. The reasons are in docs/security.md.
//
// The request gate (request-gate.ts) runs it right after the Host check: a refused request runs no
// CORS (a refused origin's preflight is refused too), no auth, no body parsing, no route.
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

/**
 * The Sec-Fetch-Site values that say the request was not sent by a page on another origin.
 * `same-site` is not one: browsers send it for another port of the same host, another program.
 */
function sameOriginSite(site: string): boolean {
  return site === 'same-origin' || site === 'none';
}

/**
 * Whether `origin` is the daemon's own: `http://` or `https://` followed by exactly the Host
 * header. Browsers serialise both from the same URL (lower case, default port left out), so the
 * two compare as strings, without allocating.
 */
export function isOwnOrigin(origin: string, host: string | undefined): boolean {
  if (!host || !origin.endsWith(host)) return false;
  const scheme = origin.length - host.length;
  return (scheme === 7 && origin.startsWith('http://')) || (scheme === 8 && origin.startsWith('https://'));
}

/** A browser opening a public page as the top-level document (a link followed, an address typed). */
function publicNavigation(req: FastifyRequest): boolean {
  const { headers } = req;
  return (
    (req.method === 'GET' || req.method === 'HEAD') &&
    headers['sec-fetch-mode'] === 'navigate' &&
    headers['sec-fetch-dest'] === 'document' &&
    req.routeOptions.config.auth === 'public'
  );
}

function refusedOrigin(origin: string): ApiError {
  if (origin === 'null') {
    return new ApiError(
      'origin_not_allowed',
      "This daemon does not take requests from pages with an opaque origin (Origin: null: a sandboxed frame, a file: or data: URL); only --cors-origin '*' allows them. See docs/security.md.",
      { origin },
    );
  }
  return new ApiError(
    'origin_not_allowed',
    `This daemon does not take requests from pages on '${origin.slice(0, 200)}' (cross-origin protection). If that page is yours, start the daemon with --cors-origin ${origin.slice(0, 200)}; see docs/security.md.`,
    { origin: origin.slice(0, 200) },
  );
}

function refusedSite(site: string): ApiError {
  return new ApiError(
    'origin_not_allowed',
    `This request was sent by a page on another site (Sec-Fetch-Site: ${site.slice(0, 40)}) without an Origin header, so no --cors-origin can allow it. Call the daemon with fetch() from a page whose origin is allowed with --cors-origin <origin>; see docs/security.md.`,
    { secFetchSite: site.slice(0, 40) },
  );
}

/** The check, built once: `(req) => refusal or undefined`; none with `--cors-origin '*'`. */
export function originCheck(corsOrigins: readonly string[]): ((req: FastifyRequest) => ApiError | undefined) | undefined {
  if (corsOrigins.includes('*')) return undefined;
  const allowed: ReadonlySet<string> = new Set(corsOrigins);
  return (req) => {
    // Two property reads and nothing else for a request from curl, a backend or the Node client.
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (allowed.has(origin) || isOwnOrigin(origin, req.headers.host)) return undefined;
      return refusedOrigin(origin);
    }
    // Node joins a repeated header into one string (only Set-Cookie is ever an array).
    const site = req.headers['sec-fetch-site'] as string | undefined;
    if (site === undefined || sameOriginSite(site) || publicNavigation(req)) return undefined;
    return refusedSite(site);
  };
}
