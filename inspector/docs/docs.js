// Starts swagger-ui on this daemon's own /openapi.json. When the daemon has a token, the inspector
// keeps it in this tab's sessionStorage; the reference sends it with the document request and with
// "Try it out" calls, so neither needs it typed twice. No inline script: the page's CSP has none.
/* global SwaggerUIBundle */
// /docs?token=… works as /ui/?token=… does: kept for the tab, removed from the address bar.
const url = new URL(window.location.href);
if (url.searchParams.get('token')) {
  sessionStorage.setItem('agentwire.token', url.searchParams.get('token'));
  url.searchParams.delete('token');
  window.history.replaceState(null, '', url.pathname + url.search + url.hash);
}
const token = sessionStorage.getItem('agentwire.token');
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  // No validator badge: it would send the document to a server on the internet.
  validatorUrl: null,
  requestInterceptor: (request) => {
    if (token && !request.headers.Authorization) request.headers.Authorization = `Bearer ${token}`;
    return request;
  },
});
