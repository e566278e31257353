// Each driver's live session is an object whose state a test can read (issue 27: drivers with
// visible state). These start the session against a stand-in process (the mock program, the ACP
// test agent, a fake `codex app-server`, the Amp stand-in) and read the state at a known point.
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSink, ProcessExit, StartOptions } from '../src/agents/types.js';
import { MockSession } from '../src/agents/mock/session.js';
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
