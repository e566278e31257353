// openapi.json as generators and validating proxies read it (issue 41): a nullable field takes
// null, a route that takes no body takes `{}`, the query token is declared only where a browser's
// EventSource needs it, the WebSocket upgrade is no plain GET, and a client generated from the
// document compiles with all that under `strict`. Every exchange the suite makes is checked
// against the document as well (test/support/openapi-check.ts); these are the rules behind it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { getRefId } from '@asteasolutions/zod-to-openapi';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../../src/http/routes.js';
import { documentPath } from '../../../src/openapi/document.js';
import { UniversalEvent } from '../../../src/schema/events.js';
import { checkExchange } from '../../support/openapi-check.js';

type Json = Record<string, any>;
const committed = JSON.parse(readFileSync(new URL('../../../openapi.json', import.meta.url), 'utf8')) as Json;
const operations = Object.entries(committed.paths as Record<string, Json>).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ method, path, op: op as Json })),
);

/** Every schema object of the document with its JSON pointer. */
function schemaNodes(node: unknown, at = ''): [string, Json][] {
  if (typeof node !== 'object' || node === null) return [];
  const here: [string, Json][] = Array.isArray(node) ? [] : [[at, node as Json]];
  return [...here, ...Object.entries(node).flatMap(([k, v]) => schemaNodes(v, `${at}/${k}`))];
}

const admitsNull = (s: Json | undefined): boolean => !!s && ((Array.isArray(s.type) && s.type.includes('null')) || s.type === 'null' || s.nullable === true);

describe('openapi.json for generators and validating proxies', () => {
  it('documents every nullable field so that null passes: no `nullable`, no ref in an allOf with a null type, no component nullable itself', () => {
    const found: string[] = [];
    for (const [at, node] of schemaNodes(committed)) {
      if ('nullable' in node && at.includes('schema')) found.push(`${at}: OpenAPI 3.0 \`nullable\``);
      const all = node.allOf as Json[] | undefined;
      if (all?.some((s) => s.$ref) && all.some(admitsNull)) found.push(`${at}: allOf with a $ref that cannot be null`);
      const any = node.anyOf as Json[] | undefined;
      if (any?.length === 2 && any.some((s) => s.type === 'null') && any.some((s) => s.$ref || s.allOf)) found.push(`${at}: anyOf [ref, null] (write it as oneOf)`);
    }
    for (const [name, schema] of Object.entries(committed.components.schemas as Record<string, Json>)) {
      if (admitsNull(schema) || (schema.enum as unknown[] | undefined)?.includes(null)) found.push(`components.schemas.${name} is nullable itself`);
    }
    expect(found).toEqual([]);
    // The case, and the fields the fix reached.
    expect(committed.components.schemas.UpdateSessionRequest.properties.budget.oneOf).toEqual([{ $ref: '#/components/schemas/Budget' }, { type: 'null' }]);
    expect(committed.components.schemas.AgentInfo.properties.capabilities.oneOf).toEqual([{ $ref: '#/components/schemas/Capabilities' }, { type: 'null' }]);
  });

  it('has no .nullable() on a registered zod schema, which zod-to-openapi writes wrong (orNull in src/schema/zod.ts)', () => {
    const found: string[] = [];
    const seen = new Set<unknown>();
    const walk = (schema: unknown, at: string): void => {
      if (typeof schema !== 'object' || schema === null || seen.has(schema) || !('_zod' in schema)) return;
      seen.add(schema);
      const def = (schema as { _zod: { def: Json } })._zod.def;
      if (def.type === 'nullable' && getRefId(def.innerType)) found.push(`${at}: ${getRefId(def.innerType)}.nullable()`);
      for (const [key, value] of Object.entries(def)) {
        if (key === 'shape') for (const [field, s] of Object.entries(value as Json)) walk(s, `${at}.${field}`);
        else if (Array.isArray(value)) value.forEach((s, i) => walk(s, `${at}[${i}]`));
        else walk(value, at);
      }
    };
    walk(UniversalEvent, 'UniversalEvent');
    for (const r of ROUTES) for (const part of [r.params, r.query?.schema, r.query?.document, r.body, r.headers]) walk(part, r.operationId);
    expect(found).toEqual([]);
  });

  it('takes null where the daemon does: PATCH budget null, an agent without capabilities or source', () => {
    const patch = (budget: unknown) => checkExchange({ method: 'PATCH', url: '/v1/sessions/s1', requestBody: { budget }, status: 200, contentType: 'application/json', body: undefined });
    expect(patch(null)).toEqual([]);
    expect(patch({})).toEqual([]);
    expect(patch({ max_turns: 2 })).toEqual([]);
    expect(patch('none')).toEqual([expect.stringContaining('updateSession (PATCH /v1/sessions/{id}): the daemon accepted a request body the document refuses')]);
    const agent = { id: 'acme', installed: false, credentialsAvailable: false, capabilities: null, adapterAvailable: false, pinnedVersion: null, source: null };
    expect(checkExchange({ method: 'GET', url: '/v1/agents', requestBody: undefined, status: 200, contentType: 'application/json', body: JSON.stringify({ agents: [agent] }) })).toEqual([]);
  });

  it('declares an optional empty body on every route that takes none, so `{}` passes', () => {
    const none = ROUTES.filter((r) => r.body === 'none');
    expect(none.map((r) => r.operationId)).toEqual(expect.arrayContaining(['interruptSession', 'terminateSession', 'rejectQuestion', 'deleteSession']));
    for (const r of none) {
      const op = committed.paths[documentPath(r.path)][r.method] as Json;
      expect(op.requestBody, r.operationId).toEqual({ required: false, content: { 'application/json': { schema: { $ref: '#/components/schemas/EmptyBody' } } } });
      const url = documentPath(r.path).replace(/\{\w+\}/g, 'x');
      const status = Number(Object.keys(op.responses).find((s) => s.startsWith('2')));
      expect(checkExchange({ method: r.method.toUpperCase(), url, requestBody: {}, status, contentType: undefined, body: '' })).toEqual([]);
      expect(checkExchange({ method: r.method.toUpperCase(), url, requestBody: { force: true }, status, contentType: undefined, body: '' })).toEqual([
        expect.stringContaining('the daemon accepted a request body the document refuses'),
      ]);
    }
    // The routes whose body is optional (fork, install) say so too.
    expect(committed.paths['/v1/sessions/{id}/fork'].post.requestBody.required).toBe(false);
    expect(committed.paths['/v1/agents/{agent}/install'].post.requestBody.required).toBe(false);
  });

  it('declares the query token only on the GET event streams a browser EventSource opens, and nowhere as a parameter', () => {
    const withToken = operations.filter(({ op }) => (op.security as Json[]).some((s) => 'tokenQuery' in s));
    expect(withToken.map(({ op }) => op.operationId).sort()).toEqual(['streamEventsSse', 'streamFeedSse']);
    for (const { method, op } of withToken) {
      expect(method).toBe('get');
      expect(Object.keys(op.responses['200'].content)).toEqual(['text/event-stream']);
    }
    const tokenParameters = operations.filter(({ op }) => ((op.parameters ?? []) as Json[]).some((p) => p.name.toLowerCase() === 'token'));
    expect(tokenParameters.map(({ op }) => op.operationId)).toEqual([]);
  });

  it('keeps the WebSocket upgrade out of `paths`, described under x-websockets', () => {
    expect(operations.filter(({ op }) => '101' in op.responses).map(({ op }) => op.operationId)).toEqual([]);
    expect(committed.paths['/v1/acp']).toBeUndefined();
    const acp = committed['x-websockets']['/v1/acp'].get as Json;
    expect(acp.operationId).toBe('acpWebSocket');
    expect(Object.keys(acp.responses)).toContain('101');
    // A browser WebSocket cannot send headers either: the token may come in the query there.
    expect(acp.security).toEqual([{ bearerAuth: [] }, { tokenQuery: [] }]);
  });

  it('generates a client (openapi-typescript, client/src/openapi.ts) that compiles under strict with budget: null and has no token in any query', () => {
    const dir = mkdtempSync(join(tmpdir(), 'aw-generated-'));
    try {
      const types = fileURLToPath(new URL('../../../client/src/openapi.js', import.meta.url));
      const probe = join(dir, 'probe.ts');
      writeFileSync(
        probe,
        `import type { paths } from ${JSON.stringify(types)};
type JsonBody<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Query<T> = T extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type Update = JsonBody<paths['/v1/sessions/{id}']['patch']['requestBody']>;
export const cleared: Update = { budget: null };
export const set: Update = { budget: { max_turns: 3 } };
export const interrupt: JsonBody<NonNullable<paths['/v1/sessions/{id}/interrupt']['post']['requestBody']>> = {};
type Turn = Query<paths['/v1/sessions/{id}/messages/stream']['post']>;
export const turn: Turn = { include_raw: true, abort_on_disconnect: true };
// @ts-expect-error the POST turn stream takes no token in its URL
export const turnLeak: Turn = { token: 't' };
type Sse = Query<paths['/v1/sessions/{id}/events/sse']['get']>;
// @ts-expect-error nor is it a parameter of the SSE stream: the security scheme says where it may go
export const sseLeak: Sse = { token: 't' };
// @ts-expect-error the WebSocket upgrade is no operation a generated client calls
export type Acp = paths['/v1/acp'];
`,
      );
      const program = ts.createProgram([probe], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        skipLibCheck: true,
        types: [],
      });
      const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      expect(diagnostics).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
