// Codex end to end with MCP servers from the create request: offered up front or found with
// tool_search, calls as tool_call + tool_result, start failures, bad keys, and under an asking
// permissionMode the tool approvals (permissions) and the servers' own forms (questions). The
// test servers are test/support/mcp-echo-server.mjs and mcp-elicit-server.mjs.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { UniversalEvent } from '../../../src/schema/events.js';
import { eventsUntil, expectWellFormedTurn, lastSequence, sendTurn } from '../../support/e2e-turns.js';
import type { Scenario } from '../../fake-model/server.js';
import type { Started } from '../../support/agent-e2e.js';
import { codexE2E, completed, lastAssistantText, modelRequests } from './codex-session.js';
import { expectNoUnparsed, getEvents, makeApp, post } from '../../support/helpers.js';

const SID = 'codex-mcp';
const e2e = codexE2E(SID);
const start = (scenario: Scenario, body: Record<string, unknown> = {}) => e2e.start({ scenario, permissionMode: 'bypass', body });

describe('codex e2e MCP (real CLI, fake model)', () => {
  it('offers the MCP servers of the create request; a call is a tool_call + tool_result with server and tool', async () => {
    const server = fileURLToPath(new URL('../../support/mcp-echo-server.mjs', import.meta.url));
    const s = await start([[{ call: 'mcp__probe__echo', input: { text: 'ping' } }], [{ text: 'The MCP tool answered.' }]], {
      mcp: { probe: { type: 'stdio', command: process.execPath, args: [server] } },
      // A model without catalog metadata: Codex offers MCP tools up front (a `mcp__probe` namespace
      // tool) instead of deferring them behind `tool_search`, which the fake model does not drive.
      model: 'agentwire-fake-model',
    });
    const turn = await sendTurn(s.app, SID, 'Use the probe.');
    // Codex says so as a `warning` when the turn starts (before turn/started): a status item.
    const status = completed(turn.events).find((i) => i.kind === 'status');
    expect(JSON.stringify(status?.content)).toContain('Model metadata for `agentwire-fake-model` not found');
    expect(turn.events.at(-1)?.type).toBe('turn.ended');
    const items = completed(turn.events);
    const call = items.find((i) => i.kind === 'tool_call');
    expect(call?.content).toContainEqual(expect.objectContaining({ type: 'tool_call', name: 'mcp__probe__echo', arguments: JSON.stringify({ text: 'ping' }) }));
    expect(call?.content).toContainEqual({ type: 'json', json: { mcp_server: 'probe', tool: 'echo' } });
    const result = items.find((i) => i.kind === 'tool_result');
    expect(result?.content).toContainEqual(expect.objectContaining({ type: 'tool_result', output: 'echo: ping' }));
    expect(lastAssistantText(turn.events)).toBe('The MCP tool answered.');
    // The first model request already listed the server's tool.
    expect(JSON.stringify(modelRequests(s)[0]?.body)).toContain('"name":"mcp__probe"');
    expectNoUnparsed(await getEvents(s.app, SID));
  });

  it('a catalogue model finds the MCP tools with tool_search, then calls them', async () => {
    const server = fileURLToPath(new URL('../../support/mcp-echo-server.mjs', import.meta.url));
    const s = await start(
      [[{ call: 'tool_search', input: { query: 'echo' } }], [{ call: 'mcp__probe__echo', input: { text: 'ping' } }], [{ text: 'Found and used it.' }]],
      { mcp: { probe: { command: process.execPath, args: [server] } } },
    );
    const turn = await sendTurn(s.app, SID, 'Find the probe and use it.');
    await expectWellFormedTurn(s.app, SID, turn, 'Find the probe and use it.', { userFrom: 'agent' });
    const [first, second] = modelRequests(s);
    // gpt-5.5 (in the catalogue): the server's tools are not offered up front, only tool_search.
    expect(JSON.stringify(first?.body)).not.toContain('"name":"mcp__probe"');
    expect(JSON.stringify(first?.body)).toContain('"type":"tool_search"');
    // Codex ran the search and handed the model the namespace it found.
    const found = (second?.body as { input?: { type?: string }[] }).input?.find((i) => i.type === 'tool_search_output');
    expect(JSON.stringify(found)).toContain('"name":"mcp__probe"');
    const call = completed(turn.events).find((i) => i.kind === 'tool_call' && i.content.some((p) => p.type === 'json'));
    expect(call?.content).toContainEqual({ type: 'json', json: { mcp_server: 'probe', tool: 'echo' } });
    const result = completed(turn.events).find((i) => i.kind === 'tool_result' && JSON.stringify(i.content).includes('echo: ping'));
    expect(result).toBeDefined();
    expect(lastAssistantText(turn.events)).toBe('Found and used it.');
    expectNoUnparsed(await getEvents(s.app, SID));
  });

  it('an MCP server that cannot start: the session starts anyway and says so in a status item', async () => {
    const s = await start([[{ text: 'unused' }]], { mcp: { broken: { command: '/nonexistent/mcp-server' } } });
    const events = await getEvents(s.app, SID);
    const statuses = completed(events).flatMap((i) => (i.kind === 'status' ? i.content : []));
    expect(statuses).toContainEqual({ type: 'status', label: 'mcpServer/startupStatus/updated', detail: expect.stringContaining("MCP server 'broken' failed") });
    expectNoUnparsed(events);
  });

  it('an MCP entry with a key Codex does not know is a 502 naming it', async () => {
    const app = await makeApp();
    try {
      const res = await post(app, '/v1/sessions/bad-mcp', { agent: 'codex', permissionMode: 'bypass', mcp: { probe: { command: 'node', bogus: 1 } } });
      expect(res.statusCode, res.body).toBe(502);
      expect(res.json()).toMatchObject({ code: 'agent_start_failed', agent: 'codex' });
      expect(res.json().detail).toContain('mcp_servers.probe.bogus');
    } finally {
      await app.app.close();
    }
  });

  describe('MCP under an asking permissionMode (default)', () => {
    const echo = fileURLToPath(new URL('../../support/mcp-echo-server.mjs', import.meta.url));
    const asker = fileURLToPath(new URL('../../support/mcp-elicit-server.mjs', import.meta.url));
    type Hitl = Extract<UniversalEvent, { type: 'permission.requested' | 'question.requested' }>;

    /** Runs a turn to its end, answering every permission and question with `answer`'s reply. */
    async function turnAnswering(s: Started, message: string, answer: (e: Hitl) => { url: string; body?: unknown }) {
      const from = await lastSequence(s.app, SID);
      expect((await post(s.app, `/v1/sessions/${SID}/messages`, { message })).statusCode).toBe(204);
      const answered = new Set<number>();
      for (;;) {
        const events = await eventsUntil(s.app, SID, from, ['turn.ended', 'permission.requested', 'question.requested']);
        const open = events.filter((e): e is Hitl => (e.type === 'permission.requested' || e.type === 'question.requested') && !answered.has(e.sequence));
        if (open.length === 0 && events.some((e) => e.type === 'turn.ended')) return events;
        for (const e of open) {
          answered.add(e.sequence);
          const { url, body } = answer(e);
          const res = await post(s.app, url, body);
          expect(res.statusCode, res.body).toBe(204);
        }
        if (open.length === 0) await new Promise((r) => setTimeout(r, 50));
      }
    }
    const permissionReply = (reply: string) => (e: Hitl) => ({
      url: `/v1/sessions/${SID}/permissions/${encodeURIComponent(e.type === 'permission.requested' ? e.data.permission_id : '')}/reply`,
      body: { reply },
    });
    const results = (events: UniversalEvent[]) =>
      completed(events).flatMap((i) => i.content.flatMap((p) => (p.type === 'tool_result' ? [p.output] : [])));
    const mcpPermissions = (events: UniversalEvent[]) => events.flatMap((e) => (e.type === 'permission.requested' ? [e.data] : []));
    const withServer = (name: string, path: string) => ({ permissionMode: 'default', model: 'agentwire-fake-model', mcp: { [name]: { command: process.execPath, args: [path] } } });

    it.each([
      ['once', ['echo: ping']],
      ['reject', []],
    ] as const)('a tool call is a permission (mcp_tool_call, server and tool); reply %s', async (reply, outputs) => {
      const s = await start([[{ call: 'mcp__probe__echo', input: { text: 'ping' } }], [{ text: 'Finished.' }]], withServer('probe', echo));
      const events = await turnAnswering(s, 'Use the probe.', permissionReply(reply));
      const [asked, ...more] = mcpPermissions(events);
      expect(more).toEqual([]);
      expect(asked).toMatchObject({ action: 'mcp_tool_call', metadata: { server: 'probe', tool: 'echo', arguments: { text: 'ping' } } });
      expect(events.filter((e) => e.type === 'permission.resolved')).toHaveLength(1);
      expect(results(events).filter((o) => o.startsWith('echo:'))).toEqual(outputs);
      expect(lastAssistantText(events)).toBe('Finished.');
      expectNoUnparsed(await getEvents(s.app, SID));
    });

    it("'always' persists for the session: the second call of the tool is not asked", async () => {
      const s = await start(
        [[{ call: 'mcp__probe__echo', input: { text: 'one' } }], [{ call: 'mcp__probe__echo', input: { text: 'two' } }], [{ text: 'Twice.' }]],
        withServer('probe', echo),
      );
      const events = await turnAnswering(s, 'Echo twice.', permissionReply('always'));
      expect(mcpPermissions(events)).toHaveLength(1);
      expect(results(events)).toEqual(['echo: one', 'echo: two']);
      expectNoUnparsed(await getEvents(s.app, SID));
    });

    it.each([
      ['answered', [['blue']], 'picked: blue'],
      ['rejected', null, 'no answer (decline)'],
    ] as const)("an MCP server's own form (elicitation) is a question; %s", async (_, answers, output) => {
      const s = await start([[{ call: 'mcp__asker__pick', input: {} }], [{ text: 'Asked.' }]], withServer('asker', asker));
      const questions: Hitl[] = [];
      const events = await turnAnswering(s, 'Pick a color.', (e) => {
        if (e.type === 'permission.requested') return permissionReply('once')(e);
        questions.push(e);
        const base = `/v1/sessions/${SID}/questions/${encodeURIComponent(e.data.question_id)}`;
        return answers ? { url: `${base}/reply`, body: { answers } } : { url: `${base}/reject` };
      });
      expect(questions.map((q) => q.data)).toEqual([expect.objectContaining({ prompt: 'Which color?', options: ['red', 'blue'] })]);
      expect(results(events)).toEqual([output]);
      expect(events.find((e) => e.type === 'question.resolved')?.data).toMatchObject({ status: answers ? 'answered' : 'rejected' });
      expectNoUnparsed(await getEvents(s.app, SID));
    });
  });
});
