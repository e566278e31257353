// The end-to-end scenarios of a built-in ACP agent (Gemini CLI, Qwen Code) through the daemon's
// HTTP API: the real pinned CLI as the session's agent process, the fake model behind it, every
// session in a throwaway sandbox (HOME, TMPDIR, XDG_* and the work dir). gemini-e2e.test.ts and
// qwen-e2e.test.ts run it, one file each so the two agents run in parallel workers. Every test
// asserts that no event is agent.unparsed.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import type { PermissionMode } from '../../../src/schema/api.js';
import type { UniversalEvent } from '../../../src/schema/events.js';
import { assistantMessages, completedItems, deltasOf, eventsUntil as eventsUntilIn, expectWellFormedTurn, lastSequence, ofType, permissionIds, replyPermission, sendTurn as sendTurnIn, textOf, turnAnswering as turnAnsweringIn } from '../../support/e2e-turns.js';
import type { FakeModel, Scenario } from '../../fake-model/server.js';
import { agentE2E } from '../../support/agent-e2e.js';
import { deliveryE2e } from './builtin-e2e-delivery.js';
import { SETTLE_SHELL } from './harness.js';
import { expectNoUnparsed, post } from '../../support/helpers.js';

export interface AcpAgentSpec {
  agent: 'gemini' | 'qwen';
  /** The session's environment on top of the sandbox's: credentials and the fake model's URL. */
  env(fake: FakeModel): Record<string, string>;
  /** The create request's model, if the agent needs one picked. */
  model?: string;
  /** Files written into the sandbox's home first (path relative to it → JSON content). */
  homeFiles?: Record<string, unknown>;
  /** Its write tool takes only absolute paths (Qwen Code). */
  absolutePaths?: boolean;
  /** Its shell may report a fast command's output as empty (Qwen Code: SETTLE_SHELL says why). */
  settleShell?: boolean;
  /** It forks natively (capabilities fork and forkAtTurn; builtin-e2e-delivery.ts). */
  forks?: boolean;
}

const SID = 'acp-e2e';
/** These CLIs are Node programs that take seconds to start and answer on a loaded machine. */
const WAIT_MS = 60_000;
const sendTurn = (app: App, id: string, message: string) => sendTurnIn(app, id, message, { timeoutMs: WAIT_MS });
const eventsUntil = (app: App, id: string, from: number, until?: Parameters<typeof eventsUntilIn>[3]) => eventsUntilIn(app, id, from, until, WAIT_MS);

export function acpE2e(spec: AcpAgentSpec): void {
  const e2e = agentE2E({
    agent: spec.agent,
    sid: SID,
    prepare: (sandbox) => {
      for (const [path, content] of Object.entries(spec.homeFiles ?? {})) {
        mkdirSync(dirname(join(sandbox.home, path)), { recursive: true });
        writeFileSync(join(sandbox.home, path), JSON.stringify(content));
      }
    },
    env: ({ fake, sandbox }) => ({ ...sandbox.env, ...spec.env(fake!) }),
    ...(spec.model ? { body: { model: spec.model } } : {}),
  });

  /** A path for a write step: relative, or inside the work dir for agents that want it absolute. */
  const at = (name: string) => (spec.absolutePaths ? join(e2e.sandbox.work, name) : name);

  const start = (scenario: (work: string) => Scenario, permissionMode: PermissionMode = 'bypass', scenarios: Record<string, Scenario> = {}) =>
    e2e.start({ scenario: (sandbox) => scenario(sandbox.work), permissionMode, scenarios });

  const allEvents = () => e2e.events();
  const reply = (id: string, answer: 'once' | 'always' | 'reject') => replyPermission(e2e.app, SID, id, answer);
  /** Runs a turn to its end, answering every permission request with `answer`. */
  const turnAnswering = (message: string, answer: 'once' | 'always' | 'reject') => turnAnsweringIn(e2e.app, SID, message, answer, WAIT_MS);

  describe(`${spec.agent} e2e (real CLI over ACP, fake model)`, { timeout: 180_000 }, () => {
    it('streams text as deltas that add up to the completed message', async () => {
      await start(() => [[{ text: 'Hello from the fake model, streamed in several pieces.' }]]);
      const turn = await sendTurn(e2e.app, SID, 'Say hello.');
      await expectWellFormedTurn(e2e.app, SID, turn, 'Say hello.');
      const [message] = assistantMessages(turn.events);
      expect(textOf(message)).toBe('Hello from the fake model, streamed in several pieces.');
      const deltas = deltasOf(turn.events, message!.item_id);
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.join('')).toBe(textOf(message));
      expectNoUnparsed(await allEvents());
    });

    it('streams reasoning as its own part before the answer', async () => {
      await start(() => [[{ thinking: 'Thinking about the colour.' }, { text: 'Blue.' }]]);
      const turn = await sendTurn(e2e.app, SID, 'Pick a colour.');
      await expectWellFormedTurn(e2e.app, SID, turn, 'Pick a colour.');
      const reasoning = completedItems(turn.events).flatMap((i) => i.content.filter((p) => p.type === 'reasoning'));
      expect(reasoning.length).toBeGreaterThan(0);
      expect(reasoning.map((p) => (p.type === 'reasoning' ? p.text : '')).join('').replace(/[\s*]/g, '')).toBe('Thinkingaboutthecolour.');
      expect(textOf(assistantMessages(turn.events).at(-1))).toBe('Blue.');
      expectNoUnparsed(await allEvents());
    });

    it('runs a shell command: tool_call and tool_result with its output', async () => {
      const settle = spec.settleShell ? SETTLE_SHELL : '';
      await start(() => [[{ tool: 'shell', command: `echo hello-from-shell${settle}` }], [{ text: 'It printed hello-from-shell.' }]]);
      const turn = await sendTurn(e2e.app, SID, 'Run echo.');
      await expectWellFormedTurn(e2e.app, SID, turn, 'Run echo.');
      const items = completedItems(turn.events);
      const call = items.find((i) => i.kind === 'tool_call');
      const result = items.find((i) => i.kind === 'tool_result');
      expect(call).toBeDefined();
      // The command is in the call item: Gemini names it in the title (it sends no rawInput); Qwen
      // announces the call before its input, and the item completes once an update brings it.
      expect(JSON.stringify(call?.content)).toContain('echo hello-from-shell');
      const output = result?.content.find((p) => p.type === 'tool_result');
      expect(output?.type === 'tool_result' ? output.output : '', JSON.stringify(result)).toContain('hello-from-shell');
      expect(textOf(assistantMessages(turn.events).at(-1))).toBe('It printed hello-from-shell.');
      // A normal tool turn shows no error (an agent's private requests we decline are status items).
      expect(ofType(turn.events, 'error')).toEqual([]);
      expectNoUnparsed(await allEvents());
    });

    it('writes a file: the file is there and the change is in the stream', async () => {
      const { sandbox } = await start(() => [[{ tool: 'write', path: at('hello.txt'), content: 'hello\n' }], [{ text: 'Wrote hello.txt.' }]]);
      const turn = await sendTurn(e2e.app, SID, 'Write hello.txt.');
      await expectWellFormedTurn(e2e.app, SID, turn, 'Write hello.txt.');
      expect(readFileSync(join(sandbox.work, 'hello.txt'), 'utf8')).toBe('hello\n');
      expect(JSON.stringify(completedItems(turn.events))).toContain('hello.txt');
      expectNoUnparsed(await allEvents());
    });

    it.each([
      ['once', true],
      ['reject', false],
    ] as const)('default mode asks before a write over the API; reply %s', async (answer, written) => {
      const { sandbox } = await start(() => [[{ tool: 'write', path: at('notes.txt'), content: 'notes\n' }], [{ text: 'Finished.' }]], 'default');
      const turn = await sendTurn(e2e.app, SID, 'Write notes.txt.');
      const [permissionId] = permissionIds(turn.events);
      expect(permissionId, JSON.stringify(turn.events.map((e) => e.type))).toBeDefined();
      expect((await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json()).toMatchObject({ status: 'waiting' });
      expect(existsSync(join(sandbox.work, 'notes.txt'))).toBe(false);
      await reply(permissionId!, answer);
      const rest = await eventsUntil(e2e.app, SID, turn.from);
      const resolved = ofType(rest, 'permission.resolved');
      expect(resolved.map((e) => e.data.permission_id)).toEqual([permissionId]);
      expect(rest.at(-1)?.type).toBe('turn.ended');
      expect(existsSync(join(sandbox.work, 'notes.txt'))).toBe(written);
      expectNoUnparsed(await allEvents());
    });

    it("default mode: 'always' — the same command is not asked again", async () => {
      const { sandbox } = await start(() => [[{ tool: 'shell', command: 'echo x >> log.txt' }], [{ tool: 'shell', command: 'echo x >> log.txt' }], [{ text: 'Twice.' }]], 'default');
      const { events } = await turnAnswering('Log twice.', 'always');
      expect(permissionIds(events)).toHaveLength(1);
      expect(readFileSync(join(sandbox.work, 'log.txt'), 'utf8')).toBe('x\nx\n');
      expect(textOf(assistantMessages(events).at(-1))).toBe('Twice.');
      expectNoUnparsed(await allEvents());
    });

    it('interrupts mid-turn; the turn ends and the next turn works', async () => {
      // Whether the agent keeps the interrupted answer in its history (the next request's turn
      // index) is its own business: the second prompt picks a scenario that answers the same
      // either way.
      const after = [[{ text: 'After the interrupt.' }], [{ text: 'After the interrupt.' }]];
      await start(() => [[{ text: 'Counting slowly: one two three' }, { sleepMs: 6_000 }, { text: ' four five' }]], 'bypass', { after });
      const from = await lastSequence(e2e.app, SID);
      expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: 'Count.' })).statusCode).toBe(204);
      await eventsUntil(e2e.app, SID, from, ['item.delta']);
      const t0 = Date.now();
      expect((await post(e2e.app, `/v1/sessions/${SID}/interrupt`)).statusCode).toBe(202);
      const events = await eventsUntil(e2e.app, SID, from, ['turn.ended', 'session.ended']);
      console.log(`[${spec.agent} e2e] interrupt → turn.ended: ${Date.now() - t0} ms`);
      expect(events.some((e) => e.type === 'session.ended')).toBe(false);
      const second = await sendTurn(e2e.app, SID, 'Go on. [scenario:after]');
      await expectWellFormedTurn(e2e.app, SID, second, 'Go on. [scenario:after]');
      expect(textOf(assistantMessages(second.events).at(-1))).toBe('After the interrupt.');
      expectNoUnparsed(await allEvents());
    });

    it('runs two turns on one session: the second model request carries the first', async () => {
      await start(() => [[{ text: 'FIRST' }], [{ text: 'SECOND' }]]);
      for (const word of ['FIRST', 'SECOND']) {
        const turn = await sendTurn(e2e.app, SID, `Reply ${word}.`);
        await expectWellFormedTurn(e2e.app, SID, turn, `Reply ${word}.`);
        expect(assistantMessages(turn.events).map(textOf)).toEqual([word]);
      }
      const last = e2e.fake.requests.filter((r) => r.turn !== undefined).at(-1);
      expect(JSON.stringify(last?.body)).toContain('FIRST');
      expect((await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json()).toMatchObject({ nativeSessionId: expect.any(String) });
      expectNoUnparsed(await allEvents());
    });

    it('a model error the agent does not retry ends the turn with an error; the session goes on', async () => {
      await start(() => [[{ error: 400, message: 'fake invalid request' }], [{ text: 'Fine again.' }]]);
      const turn = await sendTurn(e2e.app, SID, 'Fail.');
      expect(ofType(turn.events, 'turn.ended')).toHaveLength(1);
      expect(JSON.stringify(ofType(turn.events, 'error').map((e) => e.data))).toContain('fake invalid request');
      expect(e2e.fake.requests.some((r) => r.status === 400)).toBe(true);
      expect((await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json()).toMatchObject({ status: 'idle' });
      expectNoUnparsed(await allEvents());
    });

    deliveryE2e(spec.agent, e2e, SID, spec.forks ?? false);
  });
}
