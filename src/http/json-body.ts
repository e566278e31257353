// The one JSON body parser. An empty body is "no body" (curl users often send the JSON header on
// bodiless POSTs such as /interrupt); nesting is bounded before anything recursive sees the body,
// because the reviver and validation recurse per level and a 1 MB body of '[' would otherwise end
// in "Maximum call stack size exceeded"; prototype-poisoning keys are refused as Fastify's own
// parser refuses them.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';
import { deeperThan } from '../util/json-limits.js';

/** Deeper than any request body the API defines (an MCP server config is about 4 levels). */
export const MAX_JSON_DEPTH = 64;

export function installJsonParser(app: FastifyInstance): void {
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      if (nestedDeeperThan(text, MAX_JSON_DEPTH)) {
        throw new ApiError('invalid_request', `The JSON body is nested more than ${MAX_JSON_DEPTH} levels deep.`, { maxDepth: MAX_JSON_DEPTH });
      }
      done(null, JSON.parse(text, refusePoison));
    } catch (err) {
      done(err instanceof ApiError ? err : new ApiError('malformed_json', `The body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });
  app.removeContentTypeParser('text/plain'); // Fastify's default would let text bodies reach validation (400, not 415)
}

/** The shared depth scan (src/util/json-limits.ts), here with the API's stricter bound. */
export const nestedDeeperThan = deeperThan;

/** JSON reviver refusing the keys of prototype-poisoning payloads (as Fastify's own parser does). */
function refusePoison(key: string, value: unknown): unknown {
  if (key === '__proto__' || (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value)) {
    throw new ApiError('invalid_request', 'The body must not contain __proto__ or constructor.prototype keys.');
  }
  return value;
}
