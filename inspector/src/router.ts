// The page's two places: /ui/ and /ui/sessions/{id} (deep links; the daemon serves the page for
// every path under /ui/). History API only, so Back and Forward work and links are real links.
import { useEffect, useState } from 'preact/hooks';

export type Route = { page: 'home' } | { page: 'session'; id: string };

export function parseRoute(pathname: string): Route {
  const match = /^\/ui\/sessions\/([^/]+)\/?$/.exec(pathname);
  return match ? { page: 'session', id: decodeURIComponent(match[1]!) } : { page: 'home' };
}

export function sessionPath(id: string): string {
  return `/ui/sessions/${encodeURIComponent(id)}`;
}

const listeners = new Set<() => void>();

export function navigate(path: string): void {
  if (path === window.location.pathname) return;
  window.history.pushState(null, '', path);
  for (const l of listeners) l();
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.pathname));
  useEffect(() => {
    const update = () => setRoute(parseRoute(window.location.pathname));
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return route;
}

/** onClick for an <a href>: in-page navigation for a plain click, the browser's own otherwise (new tab…). */
export function linkClick(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const href = (event.currentTarget as HTMLAnchorElement).getAttribute('href');
  if (!href) return;
  event.preventDefault();
  navigate(href);
}
