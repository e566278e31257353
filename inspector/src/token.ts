// The token the page sends: from `?token=` (then removed from the address bar, so it does not stay
// in history, bookmarks or screenshots) or typed into the Connect form, and kept in sessionStorage:
// it lives as long as the tab, and is never written to disk by the page (docs/inspector.md).
const KEY = 'agentwire.token';

/** Whether the daemon wants a token: the daemon writes it into the page's own markup. */
export function tokenRequired(): boolean {
  return document.querySelector('meta[name="agentwire-auth"]')?.getAttribute('content') === 'bearer';
}

/** Moves `?token=` from the URL into sessionStorage; returns the stored token, if any. */
export function takeToken(): string | undefined {
  const url = new URL(window.location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl !== null) {
    url.searchParams.delete('token');
    window.history.replaceState(window.history.state, '', url.pathname + url.search + url.hash);
    if (fromUrl !== '') sessionStorage.setItem(KEY, fromUrl);
  }
  return storedToken();
}

/** The token kept for this tab, if any (the URL is not read: takeToken did that at start). */
export function storedToken(): string | undefined {
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function storeToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
}

/** What the Connect form says when the daemon's 401 does not say where its token is (a daemon from
 *  before it did, or no 401 at all: the daemon could not be reached). */
export const TOKEN_HELP_FALLBACK =
  "If the daemon made its own token, it printed a link with it when it started, and (unless it runs with --persist off) agentwire token prints it again, with the daemon's --data-dir if it was given one. Otherwise it is the token the daemon was started with: --token, --token-file or AGENTWIRE_TOKEN.";

// A 401's detail first says what was wrong (no token, or not this one: the form says that in its
// own words), then where the daemon's token is and how to print it (src/daemon-token.ts tokenHelp).
// A wording this page does not know is shown whole.
const REFUSAL = /^(?:This daemon needs Authorization: Bearer <token>\.|The bearer token is not valid\.)\s*/;

/** Where the token is, from the daemon's answer: a 401's detail (shown as text, never markup), or the fallback. */
export function tokenHelpOf(answer: unknown): string {
  const problem = answer as { status?: unknown; detail?: unknown } | undefined;
  if (problem?.status !== 401 || typeof problem.detail !== 'string') return TOKEN_HELP_FALLBACK;
  return problem.detail.replace(REFUSAL, '').trim() || TOKEN_HELP_FALLBACK;
}
