// Shared test plumbing: a deterministic app (counter ids, stepping clock), JSON helpers for
// app.inject, and a poll-until helper. Every test that reads events should call expectNoUnparsed.
import { expect } from 'vitest';
import { buildApp, type App, type AppDeps } from '../../src/app.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { counterIds, steppingClock } from '../../src/util/deps.js';
import { installOpenApiCheck } from './openapi-tap.js';

/** An app for a test, its every answer checked against openapi.json (./openapi-tap.ts). */
export async function makeApp(deps: AppDeps = {}): Promise<App> {
  return buildApp({ ids: counterIds(), clock: steppingClock(), logger: false, instrument: installOpenApiCheck, ...deps });
}

export async function post(app: App, url: string, body?: unknown) {
  return app.app.inject({
    method: 'POST',
    url,
    ...(body === undefined ? {} : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
}

export async function createMock(app: App, id: string, extra: Record<string, unknown> = {}) {
  const res = await post(app, `/v1/sessions/${id}`, { agent: 'mock', ...extra });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { healthy: true; nativeSessionId?: string };
}

export async function getEvents(app: App, id: string, offset = 0, includeRaw = false): Promise<UniversalEvent[]> {
  const res = await app.app.inject({ method: 'GET', url: `/v1/sessions/${id}/events?offset=${offset}&limit=10000&include_raw=${includeRaw}` });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { events: UniversalEvent[] }).events;
}

/** Polls until `check` returns a truthy value or the timeout passes. */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 5000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Sends a message and resolves with all events once the turn has ended (or the session did). */
export async function runTurn(app: App, id: string, message: string): Promise<UniversalEvent[]> {
  const before = (await getEvents(app, id)).length;
  const res = await post(app, `/v1/sessions/${id}/messages`, { message });
  expect(res.statusCode, res.body).toBe(204);
  return waitFor(async () => {
    const events = (await getEvents(app, id)).slice(before);
    const done = events.some((e) => e.type === 'turn.ended' || e.type === 'session.ended' || e.type === 'permission.requested' || e.type === 'question.requested');
    return done ? events : undefined;
  }, 10_000, `turn '${message}' to end`);
}

export function expectNoUnparsed(events: UniversalEvent[]): void {
  expect(events.filter((e) => e.type === 'agent.unparsed')).toEqual([]);
}

export function types(events: UniversalEvent[]): string[] {
  return events.map((e) => e.type);
}
