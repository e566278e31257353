// Zod validation for routes: the first issues become the problem's detail, all of them its
// `errors` field, so a client learns exactly which field was wrong and why.
import type { z } from 'zod';
import { ApiError } from '../errors.js';

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

/** include_raw / includeRaw, whichever the client used. */
export function wantsRaw(q: { include_raw?: boolean | undefined; includeRaw?: boolean | undefined }): boolean {
  return q.include_raw ?? q.includeRaw ?? false;
}
