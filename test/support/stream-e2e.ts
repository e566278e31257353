// What every live POST /stream test checks once its stream is read (test/agents/sandbox-stream-e2e.test.ts,
// test/agents/sandbox-stream-acp-amp-e2e.test.ts): the session the dispatch created has ended, its
// events parsed whole (no agent.unparsed), and no process of it is left working in the sandbox.
import { readlinkSync } from 'node:fs';
import { expect } from 'vitest';
import type { App } from '../../src/app.js';
import type { Rendered } from './envelope-consumer.js';
import { expectNoUnparsed, getEvents } from './helpers.js';
import { processes } from './procs.js';

/** The live (not zombie) processes whose working directory is `dir`. */
export function processesIn(dir: string): string[] {
  return processes()
    .filter((p) => {
      try {
        return p.state !== 'Z' && readlinkSync(`/proc/${p.pid}/cwd`) === dir;
      } catch {
        return false;
      }
    })
    .map((p) => `${p.pid} ${p.comm}`);
}

/** The stream's session (its `agentwire-session-id` header) is ended, parsed whole, and left nothing running in `work`. */
export async function expectEndedCleanly(app: App, work: string, r: Rendered): Promise<void> {
  const id = r.headers.get('agentwire-session-id')!;
  expect(app.sessions.read(id).status).toBe('ended');
  expectNoUnparsed(await getEvents(app, id));
  expect(processesIn(work)).toEqual([]);
}
