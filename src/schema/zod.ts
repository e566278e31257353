// One place where zod learns `.openapi()`: every schema module imports `z` from here so the
// OpenAPI metadata and the runtime validators can never come from two different zod instances.
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

export { z };

/**
 * `schema | null`, for a schema registered as a component (`.openapi('Name')`). Never
 * `Registered.nullable()`: zod-to-openapi 9 reads the component's id through the nullable wrapper,
 * so the document either loses the null (the field is a bare `$ref`) or makes the shared
 * component itself nullable, for every other field that names it. A union with `null` is written
 * as `[$ref, {type: 'null'}]`, which src/openapi/document.ts turns into the `oneOf` generators
 * read as `T | null`. Inline schemas keep `.nullable()` (3.1 `type` arrays).
 */
export function orNull<S extends z.ZodType>(schema: S): z.ZodUnion<[S, z.ZodNull]> {
  return z.union([schema, z.null()]);
}
