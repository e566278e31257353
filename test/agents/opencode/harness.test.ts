// The real pinned OpenCode (`opencode serve`, HTTP API + the SSE stream GET /event, one server per
// session) through every harness scenario against the fake model: each prompt ends with the
// session idle and the assistant's final text, the effects happen, OpenCode talks to nobody but
// the fake's known routes, nothing of its process group outlives it, and the normalised
// transcript matches the committed recording exactly. RECORD_FIXTURES=1 writes the recordings
// instead (test/agents/opencode/fixtures/recorded/<scenario>.jsonl). Plus a permission rejected.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { leftovers } from '../../support/procs.js';
import { recordOpencode, type OpencodeEvent, type OpencodeRun } from './harness.js';
import { SCENARIOS, type HarnessScenario } from '../../support/scenarios.js';
import { needAgents } from '../../support/test-agents.js';

needAgents(['opencode']);

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'recorded');
const RECORD = !!process.env.RECORD_FIXTURES;
/** The fake model's routes OpenCode may call (on 1.18.33 it calls only chat completions). */
const KNOWN_ROUTES = new Set(['POST /v1/chat/completions']);
const TIMEOUT = 60_000;

const byName = (name: string): HarnessScenario => {
  const s = SCENARIOS.find((x) => x.name === name);
  if (!s) throw new Error(`no scenario ${name}`);
  return s;
};
const mine = (r: OpencodeRun) => r.events.filter((e) => e.properties?.sessionID === r.sessionID);
const ofType = (r: OpencodeRun, type: string) => mine(r).filter((e) => e.type === type);
const parts = (r: OpencodeRun, type: string) => ofType(r, 'message.part.updated').map((e) => e.properties.part).filter((p) => p?.type === type);
/** The last state of every tool part, by part id. */
const tools = (r: OpencodeRun) => [...new Map(parts(r, 'tool').map((p) => [p.id as string, p])).values()];

/** What the assistant says at the end of each prompt: the scenario's text-only model turns, in order. */
const finalTexts = (s: HarnessScenario) =>
  s.model
    .filter((turn) => turn.every((step) => !('tool' in step) && !('call' in step)))
    .map((turn) => turn.map((step) => ('text' in step ? step.text : '')).join(''));

/** Per prompt (split at each session.idle): the assistant's last finished text part. */
function assistantTextPerPrompt(r: OpencodeRun): string[] {
  const assistant = new Set(ofType(r, 'message.updated').filter((e) => e.properties.info.role === 'assistant').map((e) => e.properties.info.id as string));
  const out: string[] = [];
  let last: string | undefined;
  for (const e of mine(r)) {
    const part = e.properties.part;
    if (e.type === 'message.part.updated' && part?.type === 'text' && part.time?.end !== undefined && assistant.has(part.messageID)) last = part.text;
    if (e.type === 'session.idle') {
      out.push(last ?? '<no text>');
      last = undefined;
    }
  }
  return out;
}

function expectCommon(s: HarnessScenario, r: OpencodeRun): void {
  const context = `stderr:\n${r.stderr.slice(-2000)}`;
  // Every prompt ended with the session idle, and nothing failed.
  expect(ofType(r, 'session.idle'), context).toHaveLength(s.prompts.length);
  expect(ofType(r, 'session.error'), context).toEqual([]);
  expect(r.events.filter((e) => e.type === '$unparsed')).toEqual([]);
  expect(r.events[0]?.type).toBe('server.connected');
  expect(ofType(r, 'session.created')).toHaveLength(1);
  // Every request went to a known route of the fake, with the key we configured.
  expect(r.requests.length).toBeGreaterThan(0);
  for (const q of r.requests) {
    expect(KNOWN_ROUTES.has(`${q.method} ${q.path}`), `${q.method} ${q.path}`).toBe(true);
    expect(q.headers.authorization).toBe('Bearer [redacted]');
    expect(q.headers['x-session-id']).toBe(r.sessionID);
  }
  // It installed nothing (no npm registry: see seedConfigDir).
  expect(r.npmWork).toEqual([]);
  // The title is asked for once, without tools, on the first prompt.
  expect(r.requests.filter((q) => q.toolless)).toHaveLength(1);
  // The server was stopped and nothing of its process group is left.
  expect(leftovers(r.pgid)).toEqual([]);
}

function compareWithFixture(name: string, r: OpencodeRun): void {
  const file = join(FIXTURES, `${name}.jsonl`);
  const text = `${r.lines.join('\n')}\n`;
  if (RECORD) {
    mkdirSync(FIXTURES, { recursive: true });
    writeFileSync(file, text);
    return;
  }
  if (!existsSync(file)) throw new Error(`${file} is missing: record it with RECORD_FIXTURES=1 npx vitest run test/agents/opencode/harness.test.ts`);
  expect(r.lines).toEqual(readFileSync(file, 'utf8').trimEnd().split('\n'));
}

describe('OpenCode (opencode serve) against the fake model', () => {
  for (const scenario of SCENARIOS) {
    it(
      scenario.name,
      async () => {
        const r = await recordOpencode(scenario);
        expectCommon(scenario, r);
        expect(assistantTextPerPrompt(r)).toEqual(finalTexts(scenario));

        const served = r.requests.filter((q) => !q.toolless).map((q) => `${q.status} ${q.turn}`);
        switch (scenario.name) {
          case 'shell': {
            const [bash] = tools(r);
            expect(tools(r)).toHaveLength(1);
            expect(bash).toMatchObject({ tool: 'bash', state: { status: 'completed', input: { command: 'echo hello-from-shell' } } });
            expect(bash.state.output).toContain('hello-from-shell');
            expect(served).toEqual(['200 0', '200 1']);
            break;
          }
          case 'write-file':
          case 'permission': {
            const file = scenario.name === 'write-file' ? 'hello.txt' : 'notes.txt';
            expect(r.files).toEqual({ [file]: scenario.name === 'write-file' ? 'hello file\n' : 'notes\n' });
            expect(tools(r)).toMatchObject([{ tool: 'write', state: { status: 'completed', input: { filePath: file } } }]);
            expect(served).toEqual(['200 0', '200 1']);
            const asked = ofType(r, 'permission.asked');
            if (scenario.name === 'write-file') {
              expect(asked).toEqual([]);
              break;
            }
            // Asked once for the edit permission of that file, answered "once" over HTTP, then written.
            expect(asked).toHaveLength(1);
            const ask = asked[0] as OpencodeEvent;
            expect(ask.properties).toMatchObject({ permission: 'edit', tool: { callID: tools(r)[0]?.callID } });
            expect(ask.properties.metadata.filepath).toMatch(/\/work\/notes\.txt$/);
            expect(ofType(r, 'permission.replied').map((e) => e.properties)).toEqual([{ sessionID: r.sessionID, requestID: ask.properties.id, reply: 'once' }]);
            expect(r.transcript).toContainEqual({ $sent: { method: 'POST', path: `/permission/${ask.properties.id}/reply`, body: { reply: 'once' } } });
            break;
          }
          case 'model-error': {
            // The first attempt fails with the 500, OpenCode says it retries, and the retry is answered.
            expect(served).toEqual(['500 0', '200 0']);
            const retries = ofType(r, 'session.status').filter((e) => e.properties.status.type === 'retry');
            expect(retries.map((e) => [e.properties.status.attempt, e.properties.status.message])).toEqual([[1, 'fake upstream failure']]);
            break;
          }
          case 'two-turns':
            expect(served).toEqual(['200 0', '200 1']);
            expect(ofType(r, 'message.updated').filter((e) => e.properties.info.role === 'user' && !e.properties.info.summary)).toHaveLength(2);
            break;
          case 'streamed-text':
            expect(parts(r, 'reasoning').at(-1)?.text).toBe('A short answer will do.');
            expect(ofType(r, 'message.part.delta').length).toBeGreaterThan(3);
            expect(served).toEqual(['200 0']);
            break;
          default:
            expect(served).toEqual(['200 0']);
        }
        if (scenario.name !== 'write-file' && scenario.name !== 'permission') expect(r.files).toEqual({});
        compareWithFixture(scenario.name, r);
      },
      TIMEOUT,
    );
  }

  it(
    'permission rejected: the tool fails, nothing is written, the turn ends',
    async () => {
      const scenario = byName('permission');
      const r = await recordOpencode(scenario, { reply: 'reject' });
      expect(ofType(r, 'session.idle')).toHaveLength(1);
      const asked = ofType(r, 'permission.asked');
      expect(asked).toHaveLength(1);
      expect(ofType(r, 'permission.replied').map((e) => e.properties.reply)).toEqual(['reject']);
      expect(tools(r)).toMatchObject([{ tool: 'write', state: { status: 'error', error: expect.stringContaining('rejected permission') } }]);
      expect(r.files).toEqual({});
      // The turn stops at the rejection: the model is not asked again.
      expect(r.requests.filter((q) => !q.toolless).map((q) => `${q.status} ${q.turn}`)).toEqual(['200 0']);
      expect(leftovers(r.pgid)).toEqual([]);
    },
    TIMEOUT,
  );
});
