// The suite's OpenAPI check (test/support/openapi-check.ts) catches what a validating proxy would:
// a bare Fastify app, with the check installed as makeApp installs it, answers in ways the
// committed openapi.json does not allow, and each answer must be reported, naming the operation.
// Passing exchanges are shown to pass, so the check is not simply loud.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { installOpenApiCheck } from '../../support/openapi-tap.js';
import { takeViolations } from '../../support/openapi-violations.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** An app whose routes answer as `routes` says, checked as the tests' apps are. */
async function checked(routes: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  app = Fastify();
  installOpenApiCheck(app);
  routes(app);
  await app.ready();
  return app;
}

const event = (sequence: unknown) => ({
  event_id: 'evt_1', sequence, time: '2026-01-01T00:00:00.000Z', session_id: 's1', native_session_id: null,
  source: 'daemon', synthetic: true, raw: null, type: 'turn.started', data: { turn_id: 't1' },
});

describe('the OpenAPI check on every exchange', () => {
  it('reports a body, a status and a content type the operation does not document, and passes what it does', async () => {
    const a = await checked((f) => {
      f.get('/v1/health', async (req, reply) => (req.headers['x-case'] === 'bad' ? { status: 'fine' } : { status: 'ok', version: '1', uptimeMs: 1 }));
      f.get('/v1/sessions', async (_req, reply) => reply.code(418).send({ sessions: [] }));
      f.get('/v1/agents', async (_req, reply) => reply.type('text/plain').send('agents'));
    });
    await a.inject({ method: 'GET', url: '/v1/health' });
    expect(takeViolations()).toEqual([]);
    await a.inject({ method: 'GET', url: '/v1/health', headers: { 'x-case': 'bad' } });
    await a.inject({ method: 'GET', url: '/v1/sessions' });
    await a.inject({ method: 'GET', url: '/v1/agents' });
    expect(takeViolations()).toEqual([
      expect.stringMatching(/^getHealth \(GET \/v1\/health\): the 200 application\/json body is not valid: .*\/status must be equal to one of the allowed values/),
      expect.stringMatching(/^listSessions \(GET \/v1\/sessions\): status 418 is not documented/),
      'listAgents (GET /v1/agents): status 200 answered text/plain; the document says application/json',
    ]);
  });

  it('reports a request the daemon accepted and the document refuses: body, missing body, query', async () => {
    const a = await checked((f) => {
      f.patch('/v1/sessions/:id', async () => ({}));
      f.post('/v1/sessions/:id/interrupt', async (_req, reply) => reply.code(202).send());
      f.get('/v1/sessions/:id/events', async () => ({ events: [], hasMore: false }));
    });
    const json = { 'content-type': 'application/json' };
    await a.inject({ method: 'POST', url: '/v1/sessions/s1/interrupt', headers: json, payload: '{}' });
    await a.inject({ method: 'GET', url: '/v1/sessions/s1/events?offset=0&includeRaw=true' });
    expect(takeViolations()).toEqual([]);
    await a.inject({ method: 'PATCH', url: '/v1/sessions/s1', headers: json, payload: '{"budget": "none"}' });
    await a.inject({ method: 'PATCH', url: '/v1/sessions/s1' });
    await a.inject({ method: 'GET', url: '/v1/sessions/s1/events?token=t' });
    const found = takeViolations();
    // (Its answer, `{}`, is no SessionInfo either: reported too, not asserted here.)
    expect(found).toContainEqual(expect.stringMatching(/^updateSession \(PATCH \/v1\/sessions\/\{id\}\): the daemon accepted a request body the document refuses: \/budget/));
    expect(found).toContain('updateSession (PATCH /v1/sessions/{id}): the daemon accepted a request without the body the document requires');
    expect(found).toContain("getEvents (GET /v1/sessions/{id}/events): the daemon accepted the query parameter 'token', which the document does not declare");
  });

  it('checks each frame of a stream the route writes itself (a hijacked reply), naming the item', async () => {
    const a = await checked((f) => {
      f.post('/v1/sessions/:id/messages/stream', (req, reply) => {
        reply.hijack();
        reply.raw.writeHead(200, { 'content-type': 'application/x-ndjson' });
        const second = req.headers['x-case'] === 'bad' ? event('two') : event(2);
        reply.raw.write(`${JSON.stringify(event(1))}\n`);
        reply.raw.end(`${JSON.stringify(second)}\n`);
      });
    });
    const send = (headers: Record<string, string>) => a.inject({ method: 'POST', url: '/v1/sessions/s1/messages/stream', headers: { 'content-type': 'application/json', ...headers }, payload: '{"message":"hi"}' });
    await send({});
    expect(takeViolations()).toEqual([]);
    await send({ 'x-case': 'bad' });
    expect(takeViolations()).toEqual(['postMessageStream (POST /v1/sessions/{id}/messages/stream): the 200 application/x-ndjson body (item 2) is not valid: /sequence must be integer {"type":"integer"}']);
  });

  it('leaves out what is no operation: the inspector, a preflight, a 404 for an unknown path; and reports a 2xx for an undocumented one', async () => {
    const a = await checked((f) => {
      f.get('/ui/', async () => 'page');
      f.get('/v1/secret', async () => ({ ok: true }));
    });
    await a.inject({ method: 'GET', url: '/ui/' });
    await a.inject({ method: 'GET', url: '/no/such/path' });
    expect(takeViolations()).toEqual([]);
    await a.inject({ method: 'GET', url: '/v1/secret' });
    expect(takeViolations()).toEqual(['GET /v1/secret: answered 200, and the document has no such operation']);
  });
});
