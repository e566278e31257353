// Assertions shared by the HTTP route tests: the problem+json shape every error must have.
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { UniversalEvent } from '../../src/schema/events.js';

/** A stack frame, a source location or a serialized `stack` field: none may reach a client. */
const STACK_TRACE = /\n\s*at |\bat .+:\d+:\d+|\.[jt]s:\d+|node:internal|"stack"/;

/** Asserts an RFC 9457 problem with this status and code; returns its body for further checks. */
export function expectProblem(res: LightMyRequestResponse, status: number, code: string): Record<string, unknown> & { detail: string } {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = res.json<Record<string, unknown> & { detail: string }>();
  expect(problem).toMatchObject({
    type: `https://agentwire.dev/problems/${code}`,
    title: expect.any(String),
    status,
    detail: expect.any(String),
    code,
  });
  expect(problem.detail.length).toBeGreaterThan(0);
  expect(res.body).not.toMatch(STACK_TRACE);
  return problem;
}

/** The data of the session's session.started event (the mock reports model, cwd and pid there). */
export function sessionStarted(events: UniversalEvent[]): { metadata?: Record<string, unknown> } {
  const started = events.find((e) => e.type === 'session.started');
  expect(started, 'session.started').toBeDefined();
  return started?.type === 'session.started' ? started.data : {};
}
