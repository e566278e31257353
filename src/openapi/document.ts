// The OpenAPI 3.1 document, written from the route table (src/http/routes.ts): each operation is
// its route's declaration, with the zod schemas that validate its requests (design rules "Thin
// routes, declared once" and "Schema is the type"). `npm run openapi` writes it to openapi.json; a
// test fails on drift, another runs `redocly lint` on it, another checks that it lists exactly the
// routes the daemon serves. It lives outside src/schema/ because it reads the routes: the schemas
// know nothing of HTTP.
import { OpenApiGeneratorV31, OpenAPIRegistry, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { Route } from '../http/route.js';
import { BODY_ERRORS, TAGS } from '../http/route.js';
import { ROUTES } from '../http/routes.js';
import { EmptyBody } from '../schema/api.js';
import { UniversalEvent } from '../schema/events.js';
import { z } from '../schema/zod.js';
import { problems, SECURITY_SCHEMES, securityOf } from './cross-cutting.js';
import { nullableRefsAsOneOf } from './nullable.js';

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
    ...(route.query ? { query: documentQuery(route.query) } : {}),
    ...(route.headers ? { headers: route.headers } : {}),
    ...(route.body ? { body: requestBody(route) } : {}),
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
    responses: { ...route.ok, ...problems(route.method, route.auth, [...(route.errors ?? []), ...(route.body === 'none' ? BODY_ERRORS : [])]) },
  };
}

/** The query a route documents, plus the camelCase spellings its schema also takes
 *  (`includeRaw` beside `include_raw`), each as a deprecated alias: a validating proxy must let
 *  through what the docs show and the daemon accepts, and a generator marks the alias as the
 *  spelling not to use. `token` is the security scheme's (cross-cutting.ts), never a parameter. */
function documentQuery(query: NonNullable<Route['query']>): z.ZodObject {
  const documented = query.document.shape as Record<string, z.ZodType>;
  const accepted = Object.keys((query.schema as z.ZodObject).shape ?? {});
  const aliases: Record<string, z.ZodType> = {};
  for (const name of accepted) {
    const spelled = documentName(name);
    if (name in documented || name === 'token' || !(spelled in documented)) continue;
    aliases[name] = documented[spelled]!.openapi({ description: `The same as \`${spelled}\`: the daemon takes both spellings; prefer that one`, param: { deprecated: true } });
  }
  return Object.keys(aliases).length === 0 ? query.document : query.document.extend(aliases);
}

/** A route that takes no body (`'none'`) still accepts `{}` (src/http/validate.ts `noBody`), and
 *  parses whatever JSON comes (so it can answer 400, 413, 415): the document declares an optional
 *  empty object, so that a validating proxy lets `{}` through and a generator sends nothing. */
function requestBody(route: Route): NonNullable<NonNullable<RouteConfig['request']>['body']> {
  const none = route.body === 'none';
  return { required: !none && !route.optionalBody, content: { 'application/json': { schema: none ? EmptyBody : route.body } } };
}

export function buildOpenApi(version: string, routes: readonly Route[] = ROUTES): Record<string, unknown> {
  const registry = new OpenAPIRegistry();
  registry.register('UniversalEvent', UniversalEvent);
  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES)) registry.registerComponent('securitySchemes', name, scheme);
  for (const route of routes) registry.registerPath(operation(route));
  const generator = new OpenApiGeneratorV31(registry.definitions);
  const document = generator.generateDocument({
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
  nullableRefsAsOneOf(document);
  moveWebSockets(document, routes);
  return document;
}

/**
 * The routes a client upgrades to a WebSocket (`GET /v1/acp`) leave `paths` for the extension
 * `x-websockets` (same shape: path → method → operation). OpenAPI 3.1 has no way to say
 * "upgrade", and generators (openapi-typescript, openapi-generator) would make a plain GET of it,
 * which can only answer 400; they ignore `x-` fields, so nothing is generated, while a reader (or
 * a WebSocket client's author) still finds the path, its query, its security and its refusals.
 */
function moveWebSockets(document: Record<string, unknown>, routes: readonly Route[]): void {
  const paths = document.paths as Record<string, Record<string, unknown>>;
  const moved: Record<string, Record<string, unknown>> = {};
  for (const route of routes.filter((r) => r.websocket)) {
    const path = documentPath(route.path);
    const item = paths[path]!;
    moved[path] = { ...moved[path], [route.method]: item[route.method] };
    delete item[route.method];
    if (Object.keys(item).length === 0) delete paths[path];
  }
  if (Object.keys(moved).length > 0) document['x-websockets'] = moved;
}
