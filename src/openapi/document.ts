// The OpenAPI 3.1 document, written from the route table (src/http/routes.ts): each operation is
// its route's declaration, with the zod schemas that validate its requests (design rules "Thin
// routes, declared once" and "Schema is the type"). `npm run openapi` writes it to openapi.json; a
// test fails on drift, another runs `redocly lint` on it, another checks that it lists exactly the
// routes the daemon serves. It lives outside src/schema/ because it reads the routes: the schemas
// know nothing of HTTP.
import { OpenApiGeneratorV31, OpenAPIRegistry, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { Route } from '../http/route.js';
import { TAGS } from '../http/route.js';
import { ROUTES } from '../http/routes.js';
import { UniversalEvent } from '../schema/events.js';
import { z } from '../schema/zod.js';
import { problems, SECURITY_SCHEMES, securityOf } from './cross-cutting.js';

/** The router's name of a path parameter → the document's: `permissionId` → `permission_id`. The
 *  document spells them in snake_case, as the event data does; the router's names show in the
 *  metrics' `route` label, so neither changes. */
function documentName(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** `/v1/sessions/:id/permissions/:permissionId/reply` → `/v1/sessions/{id}/permissions/{permission_id}/reply`. */
export function documentPath(routerPath: string): string {
  return routerPath.replace(/:(\w+)/g, (_m, name: string) => `{${documentName(name)}}`);
}

function operation(route: Route): RouteConfig {
  const params = route.params as z.ZodObject | undefined;
  const request: NonNullable<RouteConfig['request']> = {
    ...(params ? { params: z.object(Object.fromEntries(Object.entries(params.shape).map(([name, schema]) => [documentName(name), schema]))) } : {}),
    ...(route.query ? { query: route.query.document } : {}),
    ...(route.headers ? { headers: route.headers } : {}),
    ...(route.body && route.body !== 'none' ? { body: { required: !route.optionalBody, content: { 'application/json': { schema: route.body } } } } : {}),
  };
  return {
    method: route.method,
    path: documentPath(route.path),
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(Object.keys(request).length > 0 ? { request } : {}),
    tags: [route.tag],
    security: securityOf(route.auth),
    responses: { ...route.ok, ...problems(route.method, route.auth, route.errors ?? []) },
  };
}

export function buildOpenApi(version: string, routes: readonly Route[] = ROUTES): Record<string, unknown> {
  const registry = new OpenAPIRegistry();
  registry.register('UniversalEvent', UniversalEvent);
  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES)) registry.registerComponent('securitySchemes', name, scheme);
  for (const route of routes) registry.registerPath(operation(route));
  const generator = new OpenApiGeneratorV31(registry.definitions);
  return generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'agentwire',
      version,
      description: 'Runs coding-agent CLIs and serves their output as one universal, sequenced event stream.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: 'http://127.0.0.1:2468', description: 'The default listen address' }],
    tags: [...TAGS],
  }) as unknown as Record<string, unknown>;
}
