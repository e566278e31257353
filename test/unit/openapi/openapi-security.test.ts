// The document's `security` is a promise about what the daemon does with --token: every operation
// is asked of a daemon that has one, with no token, and with the right token in `?token=` only,
// and the answers must be what the operation's security says (and its 401 response documents).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { makeApp } from '../../support/helpers.js';

const committed = JSON.parse(readFileSync(new URL('../../../openapi.json', import.meta.url), 'utf8')) as Record<string, any>;
const TOKEN = 'openapi-security-test-token';
// Path parameters no request can act on: every answer is an early refusal (400, 404), never work.
// `mock` has nothing to install, so the install route answers 400 without touching npm.
const PARAMS: Record<string, string> = { id: 'no-such-session', agent: 'mock', permission_id: 'p1', question_id: 'q1' };
// The feed's stream has no path parameter to refuse: a cursor past its end is its early refusal (400).
const QUERY: Record<string, string> = { '/v1/events/sse': 'after=999999999' };

// The WebSocket upgrades (`x-websockets`) too: a GET without the upgrade still passes the gate first.
const operations = Object.entries({ ...committed.paths, ...committed['x-websockets'] } as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase() as 'GET' | 'POST' | 'DELETE', path, op })),
);

describe('openapi.json security', () => {
  let app: App;
  beforeAll(async () => {
    app = await makeApp({ config: { token: TOKEN } });
  });
  afterAll(async () => {
    await app?.app.close();
  });

  const url = (path: string) => path.replace(/\{(\w+)\}/g, (_m, name: string) => PARAMS[name]!) + (QUERY[path] ? `?${QUERY[path]}` : '');

  it('declares the two schemes', () => {
    expect(committed.components.securitySchemes).toEqual({
      bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      tokenQuery: expect.objectContaining({ type: 'apiKey', in: 'query', name: 'token' }),
    });
  });

  it.each(operations)('$method $path: needs the token exactly when its security says so', async ({ method, path, op }) => {
    const security = op.security as Record<string, string[]>[];
    expect(security, 'every operation states its security').toBeDefined();
    const bare = await app.app.inject({ method, url: url(path) });
    if (security.length === 0) {
      expect(bare.statusCode, bare.body).not.toBe(401);
      expect(op.responses['401']).toBeUndefined();
      return;
    }
    expect(bare.statusCode, bare.body).toBe(401);
    expect(op.responses['401'].content['application/problem+json']).toBeDefined();
    expect(op.responses['401'].headers['WWW-Authenticate']).toBeDefined();
    expect(security).toContainEqual({ bearerAuth: [] });

    const withHeader = await app.app.inject({ method, url: url(path), headers: { authorization: `Bearer ${TOKEN}` } });
    expect(withHeader.statusCode, withHeader.body).not.toBe(401);
    const inQuery = await app.app.inject({ method, url: `${url(path)}${QUERY[path] ? '&' : '?'}token=${TOKEN}` });
    if (security.some((s) => 'tokenQuery' in s)) expect(inQuery.statusCode, inQuery.body).not.toBe(401);
    else expect(inQuery.statusCode, inQuery.body).toBe(401);
  });
});
