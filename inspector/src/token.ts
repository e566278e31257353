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
