// The real pinned Claude Code against the fake model, in the mode the Claude adapter uses (one
// long-lived stream-json process per session, permission prompts over stdio), through every harness
// scenario. Each run must complete, have its effect, talk to nobody but the fake model, and match
// its committed normalised transcript exactly. RECORD_FIXTURES=1 writes the transcripts instead.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../fake-model/server.js';
import { recordClaude, type ClaudeLine, type ClaudeRecording } from './harness.js';
import { SCENARIOS, type HarnessScenario } from '../../support/scenarios.js';
import { needAgents } from '../../support/test-agents.js';

needAgents(['claude']);

const FIXTURES = join(import.meta.dirname, 'fixtures', 'recorded');
const RECORD = !!process.env.RECORD_FIXTURES;
const TIMEOUT = 60_000;

/** The routes of the fake model; anything else would be a 404 there. */
const KNOWN_ROUTES = new Set(['POST /v1/messages', 'POST /v1/messages/count_tokens', 'GET /v1/models', 'POST /v1/responses', 'POST /v1/chat/completions']);

/** The model calls each scenario makes, in order: [turn served, HTTP status]. Claude Code 2.1.337
 *  makes no other request (no title generation, no quota probe, no count_tokens) in this mode. */
const MODEL_CALLS: Record<string, Array<[number, number]>> = {
  'plain-text': [[0, 200]],
  'streamed-text': [[0, 200]],
  shell: [[0, 200], [1, 200]],
  'write-file': [[0, 200], [1, 200]],
  permission: [[0, 200], [1, 200]],
  'model-error': [[0, 500], [0, 200]], // the failed attempt, then the CLI's retry
  'two-turns': [[0, 200], [1, 200]],
};

const scenario = (name: string): HarnessScenario => {
  const s = SCENARIOS.find((x) => x.name === name);
  if (!s) throw new Error(`no scenario ${name}`);
  return s;
};

const ofType = (r: ClaudeRecording, type: string, subtype?: string) =>
  r.stdout.filter((l) => l.type === type && (subtype === undefined || l.subtype === subtype));

/** Tool results in the `user` lines the CLI prints after running a tool. */
function toolResults(r: ClaudeRecording): Array<{ tool_use_id: string; content: unknown; is_error?: boolean }> {
  return ofType(r, 'user').flatMap((l) => {
    const content = (l.message as { content?: unknown } | undefined)?.content;
    return Array.isArray(content) ? (content as Array<{ type?: string; tool_use_id: string; content: unknown; is_error?: boolean }>).filter((c) => c.type === 'tool_result') : [];
  });
}

function assertCompleted(r: ClaudeRecording, s: HarnessScenario): void {
  const context = `stderr:\n${r.stderr.slice(-2000)}`;
  expect(r.stdout.filter((l) => '$unparsed' in l), 'every stdout line is JSON').toEqual([]);
  expect(r.results.length, context).toBe(s.prompts.length);
  expect(ofType(r, 'result').length, 'one result per prompt, no more').toBe(s.prompts.length);
  for (const result of r.results) {
    expect(result.subtype, JSON.stringify(result).slice(0, 1000)).toBe('success');
    expect(result.is_error).toBe(false);
  }
  expect(r.unexpectedRequests).toEqual([]);
  expect(r.exit, context).toEqual({ code: 0, signal: null });
  // One session for the whole process.
  const sessions = new Set(r.stdout.map((l) => l.session_id).filter((x) => x !== undefined));
  expect(sessions.size).toBe(1);
}

function assertOnlyFakeModel(requests: RequestLogEntry[], name: string): void {
  for (const q of requests) {
    const path = q.path.startsWith('/v1/') ? q.path : `/v1${q.path}`;
    expect(KNOWN_ROUTES.has(`${q.method} ${path}`), `${q.method} ${q.path}${q.query} is a route of the fake model`).toBe(true);
    expect(q.status).not.toBe(404);
    expect(q.toolless, 'no tool-less side request (title, summary, quota)').toBeUndefined();
    expect(q.exhausted, 'no request past the scenario').toBeUndefined();
  }
  expect(requests.map((q) => `${q.method} ${q.path}${q.query}`)).toEqual(requests.map(() => 'POST /v1/messages?beta=true'));
  expect(requests.map((q) => [q.turn, q.status])).toEqual(MODEL_CALLS[name]);
}

function assertEffects(r: ClaudeRecording, name: string): void {
  const texts = r.results.map((x) => x.result);
  switch (name) {
    case 'plain-text':
      expect(texts).toEqual(['Hello!']);
      break;
    case 'streamed-text': {
      const deltas = ofType(r, 'stream_event').map((l) => (l.event as { delta?: { type?: string; text?: string } }).delta).filter((d) => d?.type === 'text_delta');
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.map((d) => d!.text).join('')).toBe(texts[0]);
      expect(JSON.stringify(ofType(r, 'assistant'))).toContain('A short answer will do.');
      break;
    }
    case 'shell': {
      const results = toolResults(r);
      expect(results).toHaveLength(1);
      expect(results[0]!.content).toBe('hello-from-shell');
      expect(results[0]!.is_error).toBe(false);
      expect(texts).toEqual(['It printed hello-from-shell.']);
      break;
    }
    case 'write-file':
      expect(r.files).toEqual({ 'hello.txt': 'hello file\n' });
      expect(texts).toEqual(['Wrote hello.txt.']);
      break;
    case 'permission': {
      expect(r.files).toEqual({ 'notes.txt': 'notes\n' });
      expect(r.permissionRequests).toHaveLength(1);
      const req = r.permissionRequests[0]!;
      expect(req.request).toMatchObject({ subtype: 'can_use_tool', tool_name: 'Write', input: { content: 'notes\n' } });
      // The answer is written the moment the request arrives: it follows it in the transcript.
      const at = r.raw.indexOf(req as unknown as ClaudeLine);
      expect(r.raw[at + 1]).toEqual({
        $sent: { type: 'control_response', response: { subtype: 'success', request_id: req.request_id, response: { behavior: 'allow', updatedInput: req.request.input } } },
      });
      expect(toolResults(r)[0]!.is_error).toBeFalsy();
      expect(r.results[0]!.permission_denials).toEqual([]);
      expect(texts).toEqual(['Done.']);
      break;
    }
    case 'model-error': {
      const retries = ofType(r, 'system', 'api_retry');
      expect(retries).toHaveLength(1);
      expect(retries[0]).toMatchObject({ attempt: 1, max_retries: 2, error_status: 500 });
      expect(texts).toEqual(['Hello after a retry.']);
      break;
    }
    case 'two-turns':
      // The second user message on the same process is a second turn of the same session.
      expect(texts).toEqual(['FIRST', 'SECOND']);
      expect(r.results.map((x) => x.result_index)).toEqual([0, 1]);
      expect(r.results.map((x) => x.num_turns)).toEqual([1, 1]);
      break;
    default:
      throw new Error(`no effect check for scenario ${name}`);
  }
}

function compareWithFixture(r: ClaudeRecording, name: string): void {
  const file = join(FIXTURES, `${name}.jsonl`);
  if (RECORD) {
    mkdirSync(FIXTURES, { recursive: true });
    writeFileSync(file, r.lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    return;
  }
  if (!existsSync(file)) throw new Error(`${file} is missing: record it with RECORD_FIXTURES=1 npx vitest run test/agents/claude/harness.test.ts`);
  const expected = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown);
  expect(r.lines).toStrictEqual(expected);
}

describe('Claude Code (real CLI, stream-json, one process per session) against the fake model', () => {
  for (const s of SCENARIOS) {
    it(s.name, { timeout: TIMEOUT }, async () => {
      const r = await recordClaude(s);
      assertCompleted(r, s);
      assertOnlyFakeModel(r.requests, s.name);
      assertEffects(r, s.name);
      compareWithFixture(r, s.name);
    });
  }

  it('a denied permission: the tool is not run, the model is told, the turn completes', { timeout: TIMEOUT }, async () => {
    const s = scenario('permission');
    const r = await recordClaude(s, { decision: 'deny', denyMessage: 'Not allowed by the test.' });
    assertCompleted(r, s);
    assertOnlyFakeModel(r.requests, s.name);
    expect(r.files).toEqual({});
    expect(r.permissionRequests).toHaveLength(1);
    const req = r.permissionRequests[0]!;
    expect(toolResults(r)).toEqual([{ type: 'tool_result', tool_use_id: req.request.tool_use_id, content: 'Not allowed by the test.', is_error: true }]);
    const denials = r.results[0]!.permission_denials as Array<{ tool_name: string; tool_use_id: string }>;
    expect(denials.map((d) => [d.tool_name, d.tool_use_id])).toEqual([['Write', req.request.tool_use_id]]);
    // The model saw the refusal: its second request carries the error tool_result.
    const second = r.requests[1]!.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(second.messages.at(-1))).toContain('Not allowed by the test.');
    expect(r.results[0]!.result).toBe('Done.');
  });
});
