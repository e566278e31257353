// The mapping of POST /stream (src/http/sandbox-lines.ts), alone: every turn of every agent's golden
// fixture (the universal events each converter makes from recorded native output) becomes lines of
// the four types only, each strict, with steps correlated by id and exactly one terminal line last;
// and the rules one by one on hand-made events (codes, open steps at the end, a crash's stderr).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SandboxLines } from '../../../src/http/sandbox-lines.js';
import type { UniversalEvent } from '../../../src/schema/events.js';
import { StreamLine } from '../../../src/schema/sandbox-stream.js';

const AGENTS = fileURLToPath(new URL('../../agents/', import.meta.url));
const KEYS = new Set(['type', 'ts', 'level', 'message', 'id', 'name', 'status', 'args', 'result', 'error', 'durationMs', 'code']);

/** Each turn of a fixture: from its turn.started to its turn.ended (or the session's end, or the log's). */
function turns(events: UniversalEvent[]): UniversalEvent[][] {
  const out: UniversalEvent[][] = [];
  events.forEach((e, i) => {
    if (e.type !== 'turn.started') return;
    const end = events.findIndex((x, j) => j > i && (x.type === 'turn.ended' || x.type === 'session.ended'));
    const stop = end < 0 ? events.length : events[end + 1]?.type === 'session.ended' ? end + 2 : end + 1;
    out.push(events.slice(i, stop));
  });
  return out;
}

/** The lines of one turn, as the writer makes them: every event, then the held line at the end of the batch. */
function linesOf(turn: UniversalEvent[]): StreamLine[] {
  const mapper = new SandboxLines();
  const lines = turn.flatMap((e) => mapper.map(e));
  lines.push(...mapper.flush());
  if (!mapper.done) lines.push(...mapper.fail('internal_error', 'the stream ended without a result', 0));
  return lines;
}

function expectWellFormed(lines: StreamLine[], where: string): void {
  for (const line of lines) {
    expect(StreamLine.safeParse(line).success, `${where}: ${JSON.stringify(line)}`).toBe(true);
    expect(Object.keys(line).filter((k) => !KEYS.has(k)), where).toEqual([]);
  }
  const terminal = lines.filter((l) => l.type === 'result' || l.type === 'error');
  expect(terminal, where).toHaveLength(1);
  expect(lines.at(-1), where).toBe(terminal[0]);
  const open = new Map<string, string>();
  for (const line of lines) {
    if (line.type !== 'step') continue;
    if (line.status === 'running') {
      expect(open.has(line.id), `${where}: ${line.id} started twice`).toBe(false);
      open.set(line.id, line.name);
    } else {
      expect(open.get(line.id), `${where}: ${line.id} ended without starting`).toBe(line.name);
      expect(line.durationMs, where).toBeGreaterThanOrEqual(0);
      open.delete(line.id);
    }
  }
  expect([...open.keys()], `${where}: steps left running`).toEqual([]);
}

describe('every agent\'s golden turns', () => {
  const fixtures = readdirSync(AGENTS).flatMap((agent) => {
    let files: string[] = [];
    try {
      files = readdirSync(join(AGENTS, agent, 'fixtures')).filter((f) => f.endsWith('.events.json'));
    } catch {
      return [];
    }
    return files.map((f) => [agent, f] as const);
  });

  it('finds fixtures of every agent', () => {
    expect(new Set(fixtures.map(([a]) => a))).toEqual(new Set(['acp', 'amp', 'claude', 'codex', 'gemini', 'mock', 'opencode', 'qwen']));
  });

  it.each(fixtures)('%s %s: only the four types, steps by id, one terminal line last', (agent, file) => {
    const events = JSON.parse(readFileSync(join(AGENTS, agent, 'fixtures', file), 'utf8')) as UniversalEvent[];
    for (const [n, turn] of turns(events).entries()) expectWellFormed(linesOf(turn), `${agent}/${file} turn ${n + 1}`);
  });

  it('makes steps of the tool calls of every agent that has them', () => {
    const stepsBy = new Map<string, number>();
    for (const [agent, file] of fixtures) {
      const events = JSON.parse(readFileSync(join(AGENTS, agent, 'fixtures', file), 'utf8')) as UniversalEvent[];
      const steps = turns(events).flatMap(linesOf).filter((l) => l.type === 'step').length;
      stepsBy.set(agent, (stepsBy.get(agent) ?? 0) + steps);
    }
    for (const agent of ['acp', 'amp', 'claude', 'codex', 'gemini', 'mock', 'opencode', 'qwen']) expect(stepsBy.get(agent), agent).toBeGreaterThan(0);
  });
});

// Hand-made events: only what the mapping reads is filled in.
let seq = 0;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
function ev<T extends UniversalEvent['type']>(type: T, data: Extract<UniversalEvent, { type: T }>['data'], atMs = seq): UniversalEvent {
  seq++;
  return { event_id: `evt_${seq}`, sequence: seq, time: new Date(T0 + atMs).toISOString(), session_id: 's', native_session_id: null, source: 'daemon', synthetic: false, raw: null, type, data } as UniversalEvent;
}
const item = (kind: 'tool_call' | 'tool_result' | 'message', content: unknown[], extra: Record<string, unknown> = {}) =>
  ({ item: { item_id: `itm_${kind}_${seq}`, native_item_id: null, parent_id: null, kind, role: kind === 'tool_result' ? 'tool' : 'assistant', content, status: 'completed', ...extra } }) as never;
const call = (id: string, name = 'Bash', args = '{"command":"ls"}') => item('tool_call', [{ type: 'tool_call', name, arguments: args, call_id: id }]);
const result = (id: string, output: string, failed = false) => item('tool_result', [{ type: 'tool_result', call_id: id, output }], failed ? { status: 'failed' } : {});
const message = (text: string) => item('message', [{ type: 'text', text }]);
const ended = (reason: string) => ev('turn.ended', { turn_id: 'turn_1', metadata: { reason } } as never);

describe('the rules', () => {
  it('a step: running with its args, then its result and the time between the two events', () => {
    const m = new SandboxLines();
    const lines = [ev('item.started', call('c1'), 100), ev('item.completed', result('c1', 'a\nb'), 350), ev('item.completed', message('Done.'), 400), ended('completed')].flatMap((e) => m.map(e));
    expect(lines).toEqual([
      { type: 'step', id: expect.stringMatching(/^itm_/), name: 'Bash', status: 'running', args: { command: 'ls' }, ts: T0 + 100 },
      { type: 'step', id: lines[0]!.type === 'step' ? lines[0]!.id : '', name: 'Bash', status: 'succeeded', result: 'a\nb', durationMs: 250, ts: T0 + 350 },
      { type: 'result', message: 'Done.', ts: expect.any(Number) },
    ]);
  });

  it('a failed tool result is a failed step with its output as the error; a result of an unseen call is a whole step', () => {
    const m = new SandboxLines();
    const lines = [ev('item.completed', call('c1')), ev('item.completed', result('c1', 'no such file', true)), ev('item.completed', result('c9', 'orphan'))].flatMap((e) => m.map(e));
    expect(lines.map((l) => (l.type === 'step' ? `${l.name} ${l.status}` : l.type))).toEqual(['Bash running', 'Bash failed', 'tool running', 'tool succeeded']);
    expect(lines[1]).toMatchObject({ error: 'no such file' });
  });

  it('a call that starts without arguments runs once they come, or with its title when none come; durationMs from its start', () => {
    // Qwen Code announces a call before its input; Gemini CLI sends only a title (ACP's tool_call).
    const acpCall = (itemId: string, id: string, args: string, title: string, status = 'completed') =>
      item('tool_call', [{ type: 'tool_call', name: 'execute', arguments: args, call_id: id }, { type: 'text', text: title }], { item_id: itemId, status });
    const m = new SandboxLines();
    const lines = [
      ev('item.started', acpCall('itm_q', 'c1', '{}', 'Shell', 'in_progress'), 100),
      ev('permission.requested', { permission_id: 'p1', action: 'command_execution', status: 'requested' }, 120),
      ev('item.completed', acpCall('itm_q', 'c1', '{"command":"ls"}', 'ls'), 150),
      ev('item.completed', result('c1', 'a'), 400),
      ev('item.started', acpCall('itm_g', 'c2', '{}', 'echo hi', 'in_progress'), 500),
      ev('item.completed', acpCall('itm_g', 'c2', '{}', 'echo hi'), 510),
      ev('item.completed', result('c2', 'hi'), 600),
      ev('item.started', acpCall('itm_n', 'c3', '', '', 'in_progress'), 700),
      ev('item.completed', message('Done.'), 800),
      ev('turn.ended', { turn_id: 'turn_1', metadata: { reason: 'completed' } } as never, 900),
    ].flatMap((e) => m.map(e));
    expect(lines.map((l) => (l.type === 'step' ? `${l.id} ${l.status} ${JSON.stringify(l.args ?? null)} ${l.durationMs ?? ''}` : l.type))).toEqual([
      'log',
      'itm_q running {"command":"ls"} ',
      'itm_q succeeded null 300',
      'itm_g running "echo hi" ',
      'itm_g succeeded null 100',
      'itm_n running null ',
      'itm_n failed null 200',
      'result',
    ]);
    expect(lines[1]).toMatchObject({ ts: T0 + 150 });
    expectWellFormed(lines, 'acp calls');
  });

  it('steps still open when the turn ends fail before the terminal line; the last message is the result, earlier ones are logs', () => {
    const m = new SandboxLines();
    const lines = [ev('item.completed', message('Let me look.')), ev('item.completed', call('c1')), ended('completed')].flatMap((e) => m.map(e));
    expect(lines.map((l) => l.type)).toEqual(['log', 'step', 'step', 'result']);
    expect(lines[0]).toMatchObject({ level: 'info', message: 'assistant: Let me look.' });
    expect(lines[2]).toMatchObject({ status: 'failed', error: 'the turn ended (completed) before the tool returned' });
    expect(lines[3]).toMatchObject({ message: 'Let me look.' });
  });

  it.each([
    ['interrupted', [], 'interrupted'],
    ['budget_exceeded', [], 'budget_exceeded'],
    ['terminated', [], 'terminated'],
    ['agent_exited', [], 'agent_exited'],
    ['error', [ev('error', { message: 'overloaded', code: 'claude_api_error' })], 'model_error'],
    ['error', [ev('error', { message: 'not delivered', code: 'turn_not_delivered' })], 'agent_error'],
  ] as const)('a turn ended %s is one error line: %s', (reason, before, code) => {
    const m = new SandboxLines();
    const lines = [...before, ended(reason)].flatMap((e) => m.map(e));
    expect(lines.at(-1)).toMatchObject({ type: 'error', code });
    expect(m.done).toBe(true);
    expect(m.fail('internal_error', 'late', 0)).toEqual([]);
    expect(m.map(ev('item.completed', message('after')))).toEqual([]);
  });

  it('a crash: the error line waits for session.ended, whose stderr goes first; or comes at the end of the batch without it', () => {
    const crash = () => [ev('error', { message: 'agent process exited with code 3', code: 'agent_exited' }), ended('error')];
    const m = new SandboxLines();
    const lines = [...crash(), ev('session.ended', { reason: 'error', terminated_by: 'agent', exit_code: 3, stderr: { head: 'fatal 1\nfatal 2', truncated: false } })].flatMap((e) => m.map(e));
    expect(lines.map((l) => l.type)).toEqual(['log', 'log', 'error']);
    expect(lines[1]).toMatchObject({ level: 'error', message: 'agent stderr: fatal 1\nfatal 2' });
    expect(lines[2]).toMatchObject({ code: 'agent_crashed', message: 'agent process exited with code 3' });
    const alone = new SandboxLines();
    expect(crash().flatMap((e) => alone.map(e)).map((l) => l.type)).toEqual(['log']);
    expect(alone.flush()).toEqual([expect.objectContaining({ type: 'error', code: 'agent_crashed' })]);
  });

  it('HITL decisions and status items are logs; deltas are nothing', () => {
    const m = new SandboxLines();
    const lines = [
      ev('permission.requested', { permission_id: 'p1', action: 'write_file', status: 'requested' }),
      ev('permission.resolved', { permission_id: 'p1', action: 'write_file', status: 'denied', metadata: { reply: 'reject', reason: 'policy' } }),
      ev('item.delta', { item_id: 'itm_1', native_item_id: null, delta: 'x' }),
      ev('item.completed', item('message', [{ type: 'status', label: 'Indexing', detail: '3 of 3' }], { kind: 'status', role: null })),
    ].flatMap((e) => m.map(e));
    expect(lines).toEqual([
      expect.objectContaining({ type: 'log', level: 'info', message: 'permission requested: write_file' }),
      expect.objectContaining({ type: 'log', level: 'warn', message: 'permission write_file denied (by policy)' }),
      expect.objectContaining({ type: 'log', level: 'info', message: 'Indexing: 3 of 3' }),
    ]);
  });
});
