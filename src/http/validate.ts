// Zod validation for routes: the first issues become the problem's detail, all of them its
// `errors` field, so a client learns exactly which field was wrong and why. Nothing unknown is
// ignored: not a body field, not a body on a route that takes none, not a query parameter.
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ApiError } from '../errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reads its query string (with a strict schema); every other route refuses one. */
    query?: true;
  }
}

export function parse<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'path'): z.infer<S> {
  const result = schema.safeParse(where === 'body' ? value : (value ?? {}));
  if (result.success) return result.data;
  const errors = result.error.issues.map((i) => ({ path: [where, ...i.path.map(String)].join('.'), message: i.message }));
  const detail =
    value === undefined && where === 'body'
      ? 'A JSON body is required (Content-Type: application/json).'
      : errors
          .slice(0, 3)
          .map((e) => `${e.path}: ${e.message}`)
          .join('; ');
  throw new ApiError('invalid_request', detail, { errors });
}

/** For routes that take no body: none, or an empty JSON object (some clients always send one). */
export function noBody(body: unknown): void {
  const empty = body === undefined || (typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0);
  if (!empty) {
    throw new ApiError('invalid_request', 'This route takes no body; send none (or {}).', { errors: [{ path: 'body', message: 'must be empty' }] });
  }
}

/**
 * The refusal of a query string on a route that does not declare `config: { query: true }` (the
 * request gate asks, once it knows the route takes none). A URL without `?` is the common case and
 * costs one character search.
 */
export function undeclaredQuery(req: FastifyRequest): ApiError | undefined {
  if (req.raw.url!.indexOf('?') < 0) return undefined;
  const names = Object.keys((req.query as Record<string, unknown> | undefined) ?? {});
  if (names.length === 0) return undefined;
  const errors = names.map((name) => ({ path: `query.${name}`, message: 'Unrecognized key: this route takes no query parameters' }));
  return new ApiError('invalid_request', `Unknown query parameter '${names[0]}': this route takes none.`, { errors: errors.slice(0, 100) });
}

/** include_raw / includeRaw, whichever the client used. */
export function wantsRaw(q: { include_raw?: boolean | undefined; includeRaw?: boolean | undefined }): boolean {
  return q.include_raw ?? q.includeRaw ?? false;
}

/** Fastify's `schemaController` option. Routes validate with zod and serialize with
 *  JSON.stringify, never with Fastify's JSON-schema compilers, so these stand in for them: Fastify
 *  then never loads Ajv or fast-json-stringify (a fifth of the bundle's code, which
 *  scripts/bundle.js leaves out of it: start-up does not compile it). A route given a `schema`
 *  fails loudly at registration instead. */
const noSchemaCompilers = () => () => {
  throw new Error('agentwire routes validate with zod (src/http/validate.ts); Fastify route schemas are not supported');
};
export const ZOD_ONLY_SCHEMAS = { compilersFactory: { buildValidator: noSchemaCompilers, buildSerializer: noSchemaCompilers } };
