// Starts swagger-ui on this daemon's own /openapi.json. When the daemon has a token, the inspector
// keeps it in this tab's sessionStorage; the reference sends it with the document request and with
// "Try it out" calls, so neither needs it typed twice. No inline script: the page's CSP has none.
/* global SwaggerUIBundle */
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
