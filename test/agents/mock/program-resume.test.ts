// The mock's own session store, without the daemon: a transcript per native session, `--resume`
// continuing it under the same id, `history` showing what the resumed process read back, and a
// missing or damaged store failing before `ready`, as a real agent's would.
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MockOut } from '../../../src/agents/mock/native.js';
import { Mock } from '../../support/mock-process.js';

let home: string;
const spawned: Mock[] = [];

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'mock-home-'));
});

afterEach(() => {
  for (const mock of spawned.splice(0)) if (mock.child.exitCode === null) mock.child.kill('SIGKILL');
  rmSync(home, { recursive: true, force: true });
});

function start(args: string[] = [], env: Record<string, string> = { MOCK_AGENT_HOME: home }) {
  const mock = new Mock(args, env);
  spawned.push(mock);
  return mock;
}

async function readyOf(mock: Mock): Promise<Extract<MockOut, { type: 'ready' }>> {
  const lines = await mock.until((l) => l.type === 'ready');
  const ready = lines[0];
  if (ready?.type !== 'ready') throw new Error(`first line is not ready: ${JSON.stringify(ready)}`);
  return ready;
}

/** The text of the turn's last assistant message. */
function replyText(lines: MockOut[]): string {
  const end = lines.findLast((l) => l.type === 'message_end');
  return end?.type === 'message_end' ? end.parts.map((p) => (p.kind === 'text' ? p.value : '')).join('') : '';
}

const history = (...prompts: string[]) =>
  [`Earlier prompts in this session (${prompts.length}):`, ...prompts.map((p, i) => `${i + 1}. ${JSON.stringify(p)}`)].join('\n');

/** Runs the prompts in a fresh mock, lets it exit at end of stdin, and returns its session id. */
async function session(...prompts: string[]): Promise<string> {
  const mock = start();
  const { session: id } = await readyOf(mock);
  for (const prompt of prompts) await mock.turn(prompt);
  mock.child.stdin.end();
  expect(await mock.exited).toBe(0);
  return id;
}

describe('mock program: sessions it can resume', () => {
  it('keeps one transcript file per session under $MOCK_AGENT_HOME/sessions', async () => {
    const id = await session('echo one');
    expect(readdirSync(join(home, 'sessions'))).toEqual([`${id}.jsonl`]);
    const records = readFileSync(join(home, 'sessions', `${id}.jsonl`), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(records).toEqual([
      { type: 'session', session: id, model: 'mock-1', cwd: process.cwd() },
      { type: 'prompt', text: 'echo one' },
      { type: 'id', id: 'msg_1' },
      { type: 'reply', id: 'msg_1', text: 'one' },
      { type: 'done', reason: 'completed' },
    ]);
  });

  it('resumes a session under the same id and lists its earlier prompts, before and after the resume', async () => {
    const id = await session('Reply with exactly the single word ONE.', 'echo two words');

    const second = start(['--resume', id, '--model', 'mock-big']);
    expect(await readyOf(second)).toEqual({
      type: 'ready', session: id, model: 'mock-big', mode: 'default', cwd: process.cwd(), pid: second.child.pid, resumed: true, turns: 2,
    });
    const lines = await second.turn('history');
    expect(replyText(lines)).toBe(history('Reply with exactly the single word ONE.', 'echo two words'));
    // Ids go on where the first process stopped: msg_1 and msg_2 belong to it.
    expect(lines[0]).toEqual({ type: 'message_start', id: 'msg_3', role: 'assistant' });
    second.child.stdin.end();
    expect(await second.exited).toBe(0);

    const third = start(['--resume', id]);
    expect(await readyOf(third)).toMatchObject({ session: id, resumed: true, turns: 3 });
    expect(replyText(await third.turn('history'))).toBe(history('Reply with exactly the single word ONE.', 'echo two words', 'history'));
  });

  it('answers history in a new session with no earlier prompts', async () => {
    const mock = start();
    expect(replyText(await mock.turn('history'))).toBe('No earlier prompts in this session.');
    expect(await readyOf(mock)).not.toHaveProperty('resumed');
  });

  it.each([
    ['an unknown id', 'mock-doesnotexist', 'no transcript at'],
    ['an id that is not a file name', '../../etc/passwd', 'not a mock session id'],
  ])('exits 1 before ready when asked to resume %s', async (_what, id, reason) => {
    const mock = start(['--resume', id]);
    expect(await mock.exited).toBe(1);
    expect(mock.lines).toEqual([]);
    expect(mock.stderr).toContain(`mock: no session ${id} to resume: ${reason}`);
  });

  it('refuses a file that is not a transcript of that session', async () => {
    const id = await session('echo one');
    writeFileSync(join(home, 'sessions', 'mock-other.jsonl'), readFileSync(join(home, 'sessions', `${id}.jsonl`)));
    const mock = start(['--resume', 'mock-other']);
    expect(await mock.exited).toBe(1);
    expect(mock.lines).toEqual([]);
    expect(mock.stderr).toMatch(/^mock: no session mock-other to resume: .* is not a transcript of session mock-other\n$/);
  });

  it('keeps every earlier turn when killed mid-turn, and a torn last line does not spoil the next', async () => {
    const first = start();
    const { session: id } = await readyOf(first);
    await first.turn('echo first');
    first.send({ type: 'prompt', text: 'slow 50' });
    await first.until((l) => l.type === 'text' && l.chunk === 'tick 2\n');
    first.child.kill('SIGKILL');
    expect(await first.exited).toBeNull();
    // What a crash in the middle of a write would leave behind.
    appendFileSync(join(home, 'sessions', `${id}.jsonl`), '{"type":"reply","id":"msg_2","te');

    const second = start(['--resume', id]);
    expect(await readyOf(second)).toMatchObject({ session: id, resumed: true, turns: 2 });
    const lines = await second.turn('history');
    expect(replyText(lines)).toBe(history('echo first', 'slow 50'));
    expect(lines[0]).toEqual({ type: 'message_start', id: 'msg_3', role: 'assistant' });
    second.child.stdin.end();
    expect(await second.exited).toBe(0);

    const third = start(['--resume', id]);
    expect(replyText(await third.turn('history'))).toBe(history('echo first', 'slow 50', 'history'));
  });

  it('still runs, unresumable, when its store cannot be written', async () => {
    const notADir = join(home, 'file');
    writeFileSync(notADir, '');
    const mock = start([], { MOCK_AGENT_HOME: notADir });
    await mock.turn('echo one');
    expect(replyText(await mock.turn('history'))).toBe(history('echo one'));
    await vi.waitFor(() => expect(mock.stderr).toMatch(/^mock: cannot keep a transcript in .*; this session cannot be resumed\n$/));
  });
});
