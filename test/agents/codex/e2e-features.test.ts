// Codex end to end, the features beyond a plain turn: image attachments, reasoning effort
// (`variant`), agentMode plan and its request_user_input questions. The daemon's HTTP API, the real
// pinned Codex (0.171.0) and the fake model behind it (test/agents/codex/codex-session.ts). MCP servers:
// test/agents/codex/e2e-mcp.test.ts.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventsUntil, expectWellFormedTurn, sendTurn } from '../../support/e2e-turns.js';
import type { Scenario } from '../../fake-model/server.js';
import type { Started } from '../../support/agent-e2e.js';
import { codexE2E, completed, lastAssistantText, modelRequests } from './codex-session.js';
import { expectNoUnparsed, getEvents, makeApp, post } from '../../support/helpers.js';

const SID = 'codex-features';
const e2e = codexE2E(SID);
const start = (scenario: Scenario, body: Record<string, unknown> = {}) => e2e.start({ scenario, permissionMode: 'bypass', body });

describe('codex e2e features (real CLI, fake model)', () => {
  it('sends an image attachment as an image input and another file by its path', async () => {
    const s = await start([[{ text: 'I see a one-pixel image.' }]]);
    // A 1×1 PNG.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    writeFileSync(join(s.sandbox.work, 'pixel.png'), png);
    writeFileSync(join(s.sandbox.work, 'notes.md'), '# notes\n');
    const attachments = [{ path: 'pixel.png', mime: 'image/png' }, { path: join(s.sandbox.work, 'notes.md') }];
    const turn = await sendTurn(s.app, SID, 'What is in the image?', { attachments });
    // Codex's own userMessage item is the text it was given: the message, then the file list.
    const sent = `What is in the image?\n\nAttached files:\n- ${join(s.sandbox.work, 'notes.md')}`;
    await expectWellFormedTurn(s.app, SID, turn, sent, { userFrom: 'agent' });
    expect(lastAssistantText(turn.events)).toBe('I see a one-pixel image.');
    // The model got the image itself (Codex sends a local image as a data URL) and the file's path.
    const input = JSON.stringify((modelRequests(s)[0]?.body as { input?: unknown }).input);
    expect(input).toContain(`"image_url":"data:image/png;base64,`);
    expect(input).toContain(join(s.sandbox.work, 'notes.md'));
    // The user message item shows the image as an image part.
    const user = completed(turn.events).find((i) => i.kind === 'message' && i.role === 'user');
    expect(user?.content).toContainEqual({ type: 'image', path: join(s.sandbox.work, 'pixel.png') });
    expectNoUnparsed(await getEvents(s.app, SID));
  });

  it('sends the session variant as the reasoning effort of every model request', async () => {
    const s = await start([[{ text: 'FIRST' }], [{ text: 'SECOND' }]], { variant: 'high' });
    for (const word of ['FIRST', 'SECOND']) {
      const turn = await sendTurn(s.app, SID, `Reply ${word}.`);
      await expectWellFormedTurn(s.app, SID, turn, `Reply ${word}.`, { userFrom: 'agent' });
    }
    const efforts = modelRequests(s).map((r) => (r.body as { reasoning?: { effort?: string } }).reasoning?.effort);
    expect(efforts).toEqual(['high', 'high']);
    expectNoUnparsed(await getEvents(s.app, SID));
  });

  it('without a variant the model gets the default effort of the model (gpt-5.5: medium)', async () => {
    const s = await start([[{ text: 'ONE' }]]);
    await sendTurn(s.app, SID, 'Reply ONE.');
    expect(modelRequests(s).map((r) => (r.body as { reasoning?: { effort?: string } }).reasoning?.effort)).toEqual(['medium']);
  });

  describe('request_user_input (agentMode plan)', () => {
    const question = { id: 'color', header: 'Color', question: 'Which color?', options: [{ label: 'Red', description: 'warm' }, { label: 'Blue', description: 'cool' }] };
    const scenario: Scenario = [[{ call: 'request_user_input', input: { questions: [question] } }], [{ text: 'Done asking.' }]];
    /** What Codex gave the model back for its request_user_input call. */
    const toolOutput = (s: Started) => {
      const input = (modelRequests(s).at(-1)?.body as { input?: { type?: string; output?: unknown }[] }).input ?? [];
      return input.find((i) => i.type === 'function_call_output')?.output;
    };

    async function ask() {
      const s = await start(scenario, { agentMode: 'plan' });
      const turn = await sendTurn(s.app, SID, 'Ask me.');
      const asked = turn.events.find((e) => e.type === 'question.requested');
      expect(asked?.type === 'question.requested' ? asked.data : undefined).toMatchObject({ prompt: 'Which color?', options: ['Red', 'Blue'], status: 'requested' });
      expect((await s.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json()).toMatchObject({ status: 'waiting' });
      return { s, turn, questionId: asked?.type === 'question.requested' ? asked.data.question_id : '' };
    }

    it('is a question.requested; the reply reaches the model as the answer', async () => {
      const { s, turn, questionId } = await ask();
      const res = await post(s.app, `/v1/sessions/${SID}/questions/${encodeURIComponent(questionId)}/reply`, { answers: [['Blue']] });
      expect(res.statusCode, res.body).toBe(204);
      const rest = await eventsUntil(s.app, SID, turn.from);
      expect(rest.find((e) => e.type === 'question.resolved')?.data).toMatchObject({ question_id: questionId, status: 'answered' });
      await expectWellFormedTurn(s.app, SID, { from: turn.from, events: rest }, 'Ask me.', { userFrom: 'agent' });
      expect(lastAssistantText(rest)).toBe('Done asking.');
      expect(JSON.parse(String(toolOutput(s)))).toEqual({ answers: { color: { answers: ['Blue'] } } });
      expectNoUnparsed(await getEvents(s.app, SID));
    });

    it('rejected, the model gets no answers and the turn goes on', async () => {
      const { s, turn, questionId } = await ask();
      const res = await post(s.app, `/v1/sessions/${SID}/questions/${encodeURIComponent(questionId)}/reject`);
      expect(res.statusCode, res.body).toBe(204);
      const rest = await eventsUntil(s.app, SID, turn.from);
      expect(rest.find((e) => e.type === 'question.resolved')?.data).toMatchObject({ question_id: questionId, status: 'rejected' });
      expect(rest.at(-1)?.type).toBe('turn.ended');
      expect(lastAssistantText(rest)).toBe('Done asking.');
      expect(JSON.parse(String(toolOutput(s)))).toEqual({ answers: {} });
      expectNoUnparsed(await getEvents(s.app, SID));
    });

    it('the default agentMode does not offer it (Codex answers the model "unavailable in Default mode")', async () => {
      const s = await start(scenario);
      const turn = await sendTurn(s.app, SID, 'Ask me.');
      expect(turn.events.some((e) => e.type === 'question.requested')).toBe(false);
      expect(String(toolOutput(s))).toContain('unavailable in Default mode');
      expectNoUnparsed(await getEvents(s.app, SID));
    });

    it('an unknown agentMode is a 400 before anything is spawned', async () => {
      const app = await makeApp();
      try {
        const res = await post(app, '/v1/sessions/bad-mode', { agent: 'codex', agentMode: 'architect' });
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json()).toMatchObject({ code: 'invalid_request', agent: 'codex' });
        expect(res.json().detail).toContain('valid: default, plan');
      } finally {
        await app.app.close();
      }
    });
  });
});
