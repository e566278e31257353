// Which routes need the bearer token, and how they may present it: part of the API's contract.
// The auth hook (src/http/auth.ts) enforces it and the OpenAPI document's `security`
// (openapi-responses.ts) states it, both from these two sets, so they cannot disagree. They live
// here so that the document does not import the routes (src/schema/ is below src/http/).

/** Routes anyone may call, token or not (router paths, `:id` for parameters). */
export const OPEN_ROUTES: ReadonlySet<string> = new Set(['/v1/health']);
/** Routes that also take `?token=`: the two streams, since a browser EventSource cannot send headers. */
export const QUERY_TOKEN_ROUTES: ReadonlySet<string> = new Set(['/v1/sessions/:id/events/sse', '/v1/sessions/:id/messages/stream']);
