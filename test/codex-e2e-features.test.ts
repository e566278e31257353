// Codex end to end, the features beyond a plain turn: MCP servers from the create request, image
// attachments, reasoning effort (`variant`) and request_user_input questions. The daemon's HTTP
// API, the real pinned Codex (0.169.0) and the fake model behind it (test/harness/codex-session.ts).
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { UniversalEvent, UniversalItem } from '../src/schema/events.js';
import { expectWellFormedTurn, sendTurn } from './e2e-turns.js';
import type { Scenario } from './fake-model/server.js';
import { startCodexSession, type CodexSession } from './harness/codex-session.js';
import { expectNoUnparsed, getEvents } from './helpers.js';

const SID = 'codex-features';
let session: CodexSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

async function start(scenario: Scenario, body: Record<string, unknown> = {}) {
  session = await startCodexSession(SID, scenario, body);
  return session;
}

const completed = (events: UniversalEvent[]): UniversalItem[] => events.flatMap((e) => (e.type === 'item.completed' ? [e.data.item] : []));
const textOf = (item: UniversalItem | undefined) => (item?.content ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
const lastAssistantText = (events: UniversalEvent[]) => textOf(completed(events).filter((i) => i.kind === 'message' && i.role === 'assistant').at(-1));
/** The model requests that carried the conversation (Codex's own tool-less side requests excluded). */
const modelRequests = (s: CodexSession) => s.fake.requests.filter((r) => r.method === 'POST' && Array.isArray((r.body as { tools?: unknown })?.tools));

describe('codex e2e features (real CLI, fake model)', () => {
  it('offers the MCP servers of the create request; a call is a tool_call + tool_result with server and tool', async () => {
    const server = fileURLToPath(new URL('./support/mcp-echo-server.mjs', import.meta.url));
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
});
