// One place where zod learns `.openapi()`: every schema module imports `z` from here so the
// OpenAPI metadata and the runtime validators can never come from two different zod instances.
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

export { z };
