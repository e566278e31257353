// Each driver's live session is an object whose state a test can read (issue 27: drivers with
// visible state). These start the session against a stand-in process (the mock program, the ACP
// test agent, a fake `codex app-server`, the Amp stand-in) and read the state at a known point.
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSink, ProcessExit, StartOptions } from '../src/agents/types.js';
import { MockSession } from '../src/agents/mock/session.js';
import { AcpSession } from '../src/agents/acp/session.js';
import { waitFor } from './helpers.js';

const limits = { maxLineChars: 1 << 20, killGraceMs: 500, startTimeoutMs: 10_000, stderrHeadLines: 20, stderrTailLines: 50 };
const logger = { debug() {}, info() {}, warn() {} };

function recordingSink(): AgentSink & { messages: unknown[]; exits: ProcessExit[] } {
  const messages: unknown[] = [];
  const exits: ProcessExit[] = [];
  return { messages, exits, native: (m) => void messages.push(m), exit: (e) => void exits.push(e) };
}

const startOptions = (extra: Partial<StartOptions> = {}): StartOptions => ({
  sessionId: 'ses_test',
  cwd: process.cwd(),
  env: {},
  agentMode: 'default',
  permissionMode: 'default',
  logger,
  ...extra,
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => undefined);
});

describe('MockSession', () => {
  it('is ready with a running child once the program said ready, and reaped after terminate', async () => {
    const sink = recordingSink();
    const session = await MockSession.start(startOptions(), sink, limits);
    cleanups.push(() => session.terminate());
    expect(session.ready).toBe(true);
    expect(session.child.running).toBe(true);
    expect(session.pid).toBe(session.child.pid);
    await session.terminate();
    expect(session.child.running).toBe(false);
    await waitFor(() => sink.exits.length === 1);
    expect(sink.exits[0]).toMatchObject({ requested: true });
  });
});

describe('AcpSession', () => {
  const AGENT = new URL('./support/acp-test-agent.mjs', import.meta.url).pathname;
  const deps = {
    definition: { id: 'defined', title: 'Test agent', args: [AGENT] },
    limits,
    locate: async () => process.execPath,
    learn: () => {},
  };

  it('holds the opened sessionId, then a pending permission request until it is answered', async () => {
    const sink = recordingSink();
    const session = await AcpSession.start(startOptions(), sink, deps);
    cleanups.push(() => session.terminate());
    expect(session).toMatchObject({ ready: true, replaying: false, loaded: false });
    expect(session.sessionId).toEqual(expect.any(String));
    expect(session.pending.size).toBe(0);
    await session.send({ message: 'permission', attachments: [] });
    await waitFor(() => session.pending.size === 1, 5_000, 'a pending permission request');
    const [id] = session.pending.keys();
    await session.replyPermission(id!, 'once');
    expect(session.pending.size).toBe(0);
    await session.terminate();
    expect(session.proc.running).toBe(false);
  });

  it('fails the start with the agent_start_failed wording when the agent exits first', async () => {
    const failing = { ...deps, definition: { ...deps.definition, args: ['-e', 'console.error("no such flag"); process.exit(2)'] } };
    await expect(AcpSession.start(startOptions(), recordingSink(), failing)).rejects.toMatchObject({
      code: 'agent_start_failed',
      detail: 'Test agent exited with code 2 before it was ready. stderr: no such flag',
    });
  });
});
