// Every content-producing mock command, end to end: HTTP in, a real mock process, the universal log
// out. HITL, errors, exits and interrupts are in mock-e2e-control.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HELP, MARKDOWN, NOTES_PATCH_DIFF, NOTES_WRITE_DIFF } from '../../../src/agents/mock/program-texts.js';
import {
  assistantMessages,
  completedItems,
  deltasOf,
  expectWellFormedTurn,
  ofType,
  sendTurn,
  textOf,
  type Turn,
} from '../../support/e2e-turns.js';
import { mockE2E } from '../../support/agent-e2e.js';
import { createMock } from '../../support/helpers.js';

const SID = 'e2e';
const e2e = mockE2E(SID);

/** One turn, checked for the per-turn invariants before the test looks at what it said. */
async function turn(message: string, attachments?: { path: string; mime?: string }[], unparsed = 0): Promise<Turn> {
  const t = await sendTurn(e2e.app, SID, message, attachments ? { attachments } : {});
  await expectWellFormedTurn(e2e.app, SID, t, message, { unparsed });
  return t;
}

describe('mock e2e: reference prompts', () => {
  it.each(['OK', 'FIRST', 'SECOND'])('answers "Reply with exactly the single word %s."', async (word) => {
    const { events } = await turn(`Reply with exactly the single word ${word}.`);
    const replies = assistantMessages(events);
    expect(replies.map(textOf)).toEqual([word]);
    expect(deltasOf(events, replies[0]!.item_id)).toEqual([word]);
  });

  it('keeps two turns of one session apart', async () => {
    const first = await turn('Reply with exactly the single word FIRST.');
    const second = await turn('Reply with exactly the single word SECOND.');
    const turnIds = [first, second].map(({ events }) => ofType(events, 'turn.started')[0]?.data.turn_id);
    expect(turnIds).toEqual(['turn_1', 'turn_2']);
    expect(assistantMessages(second.events).map(textOf)).toEqual(['SECOND']);
  });

  it('shows public and private reasoning and a json part', async () => {
    const { events } = await turn('Answer briefly and include your reasoning.');
    const [reply] = assistantMessages(events);
    expect(reply?.content).toEqual([
      { type: 'reasoning', text: 'The user wants a short answer with the reasoning shown.', visibility: 'public' },
      { type: 'reasoning', text: 'Private scratchpad: 6 × 7 = 42.', visibility: 'private' },
      { type: 'text', text: 'The answer is 42, because 6 × 7 = 42.' },
      { type: 'json', json: { answer: 42, confidence: 'high' } },
    ]);
    expect(deltasOf(events, reply!.item_id).join('')).toBe('The answer is 42, because 6 × 7 = 42.');
  });
});

describe('mock e2e: commands', () => {
  it('help: lists the commands, one delta per line', async () => {
    const { events } = await turn('help');
    const [reply] = assistantMessages(events);
    expect(textOf(reply)).toBe(HELP);
    expect(deltasOf(events, reply!.item_id)).toEqual(HELP.split(/(?<=\n)/));
  });

  it('subagent: the sub-agent starts under the delegate call, its items say so, it ends before the call returns', async () => {
    const { events } = await turn('subagent');
    const call = completedItems(events).find((i) => i.kind === 'tool_call' && i.native_item_id === 'call_1')!;
    const started = ofType(events, 'subagent.started')[0]!;
    const ended = ofType(events, 'subagent.ended')[0]!;
    expect(started.data).toEqual({ subagent_id: started.data.subagent_id, parent_item_id: call.item_id, native_subagent_id: 'agent_call_1', description: 'Look around', prompt: 'List the files.', agent_type: 'explorer' });
    expect(ended.data).toEqual({ subagent_id: started.data.subagent_id, parent_item_id: call.item_id, outcome: 'completed', summary: 'Found notes.txt.' });
    const inside = events.slice(events.indexOf(started) + 1, events.indexOf(ended));
    expect(inside.map((e) => e.type)).toEqual(['item.started', 'item.delta', 'item.completed', 'item.started', 'item.completed', 'item.started', 'item.completed']);
    expect(inside.every((e) => (e.data as { subagent_id?: string }).subagent_id === started.data.subagent_id)).toBe(true);
    const after = events.slice(events.indexOf(ended) + 1).filter((e) => e.type.startsWith('item.'));
    expect(after.length).toBeGreaterThan(0);
    expect(after.some((e) => 'subagent_id' in e.data)).toBe(false);
  });

  it('demo: every item kind and every content part type in one turn', async () => {
    const { events } = await turn('demo');
    const items = completedItems(events);
    const kinds = new Set(items.map((i) => i.kind));
    for (const kind of ['message', 'tool_call', 'tool_result', 'system', 'status', 'unknown']) expect(kinds).toContain(kind);
    const parts = new Set(items.flatMap((i) => i.content.map((p) => p.type)));
    for (const part of ['text', 'json', 'tool_call', 'tool_result', 'file_ref', 'image', 'reasoning', 'status']) expect(parts).toContain(part);

    const system = items.find((i) => i.kind === 'system');
    expect(system).toMatchObject({ role: 'system', content: [{ type: 'text', text: 'Mock demo: one turn with every item kind and content part.' }] });
    const [reply] = assistantMessages(events);
    for (const tool of items.filter((i) => i.kind === 'tool_call' || i.kind === 'tool_result')) {
      expect(tool.parent_id).toBe(reply!.item_id);
    }
  });

  it('markdown: streamed in pieces that add up to the completed text', async () => {
    const { events } = await turn('markdown');
    const [reply] = assistantMessages(events);
    const deltas = deltasOf(events, reply!.item_id);
    expect(deltas.length).toBeGreaterThanOrEqual(5);
    expect(deltas.join('')).toBe(textOf(reply));
    expect(textOf(reply)).toBe(MARKDOWN.join(''));
  });

  it('tool: a call and its result, parented to the message that announced them', async () => {
    const { events } = await turn('tool');
    const items = completedItems(events).filter((i) => i.role !== 'user');
    expect(items.map((i) => i.kind)).toEqual(['message', 'tool_call', 'tool_result', 'message']);
    const [announce, call, result, done] = items;
    expect(textOf(announce)).toBe('I will write notes.txt.');
    expect(textOf(done)).toBe('Done.');
    expect(call).toMatchObject({ parent_id: announce!.item_id, role: 'assistant', status: 'completed' });
    expect(result).toMatchObject({ parent_id: announce!.item_id, role: 'tool', status: 'completed' });

    const callPart = call!.content[0];
    expect(callPart).toMatchObject({ type: 'tool_call', name: 'write_file' });
    const callId = callPart?.type === 'tool_call' ? callPart.call_id : undefined;
    expect(JSON.parse(callPart?.type === 'tool_call' ? callPart.arguments : 'null')).toEqual({ path: 'notes.txt', content: 'hello\n' });
    expect(result!.content).toEqual([
      { type: 'tool_result', call_id: callId, output: 'wrote 6 bytes to notes.txt' },
      { type: 'file_ref', path: 'notes.txt', action: 'read' },
      { type: 'file_ref', path: 'notes.txt', action: 'write', diff: NOTES_WRITE_DIFF },
      { type: 'file_ref', path: 'notes.txt', action: 'patch', diff: NOTES_PATCH_DIFF },
    ]);
  });

  it('status: a status item with a status part', async () => {
    const { events } = await turn('status');
    const status = completedItems(events).filter((i) => i.kind === 'status');
    expect(status).toEqual([
      expect.objectContaining({ role: null, status: 'completed', content: [{ type: 'status', label: 'Indexing', detail: '3 of 3 files' }] }),
    ]);
    expect(assistantMessages(events).map(textOf)).toEqual(['Status: everything is indexed.']);
  });

  it('image: a message with an image part', async () => {
    const { events } = await turn('image');
    const [reply] = assistantMessages(events);
    expect(textOf(reply)).toBe('Here is an image.');
    expect(reply?.content).toContainEqual({ type: 'image', path: expect.stringMatching(/\/mock-image\.png$/), mime: 'image/png' });
  });

  it('unknown: an unknown item carrying the payload as json', async () => {
    const { events } = await turn('unknown');
    const unknown = completedItems(events).filter((i) => i.kind === 'unknown');
    expect(unknown).toEqual([
      expect.objectContaining({ role: null, content: [{ type: 'json', json: { kind: 'mock-artifact', values: [1, 2, 3] } }] }),
    ]);
  });

  it('echo X: replies with exactly X', async () => {
    const { events } = await turn('echo Hello,  mock world!');
    expect(assistantMessages(events).map(textOf)).toEqual(['Hello,  mock world!']);
  });

  it('anything else is echoed back whole', async () => {
    const { events } = await turn('what is this?');
    expect(assistantMessages(events).map(textOf)).toEqual(['what is this?']);
  });

  it('unparsed: exactly one agent.unparsed, and the turn goes on', async () => {
    const { events } = await turn('unparsed', undefined, 1);
    const [unparsed] = ofType(events, 'agent.unparsed');
    expect(unparsed).toMatchObject({
      source: 'daemon',
      synthetic: true,
      data: { error: 'not JSON', location: 'mock.convert', raw_hash: expect.stringMatching(/^[0-9a-f]{16}$/) },
    });
    expect(assistantMessages(events).map(textOf)).toEqual(['Printed one unparsable line.']);
  });

  it('flood 2000: every chunk is a delta and the log stays dense', async () => {
    const { events } = await turn('flood 2000');
    const [reply] = assistantMessages(events);
    const deltas = deltasOf(events, reply!.item_id);
    expect(deltas).toHaveLength(2000);
    expect(deltas.join('')).toBe(textOf(reply));
    expect(textOf(reply)).toHaveLength(2000);
  });

  it('attachments: the user message and the final reply both carry them, paths resolved against cwd', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aw-attach-'));
    writeFileSync(join(dir, 'screenshot.png'), 'png');
    writeFileSync(join(dir, 'notes.md'), '# notes');
    await createMock(e2e.app, 'attach', { cwd: dir });
    const message = 'Reply with exactly the single word SEEN.';
    const t = await sendTurn(e2e.app, 'attach', message, { attachments: [{ path: join(dir, 'screenshot.png'), mime: 'image/png' }, { path: 'notes.md' }] });
    await expectWellFormedTurn(e2e.app, 'attach', t, message, { unparsed: 0 });
    const expected = [
      { type: 'image', path: join(dir, 'screenshot.png'), mime: 'image/png' },
      { type: 'file_ref', path: join(dir, 'notes.md'), action: 'read' },
    ];
    expect(completedItems(t.events).find((i) => i.role === 'user')?.content).toEqual([{ type: 'text', text: message }, ...expected]);
    expect(assistantMessages(t.events)[0]?.content).toEqual([{ type: 'text', text: 'SEEN' }, ...expected]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('attachments that do not exist are a 400 and start no turn', async () => {
    const res = await e2e.app.app.inject({
      method: 'POST',
      url: `/v1/sessions/${SID}/messages`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ message: 'hi', attachments: [{ path: '/no/such/file.png' }] }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_request' });
    expect((await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json()).toMatchObject({ status: 'idle' });
    expect((await turn('echo still fine')).events.some((e) => e.type === 'turn.ended')).toBe(true);
  });
});
