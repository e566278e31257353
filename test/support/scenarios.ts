// The scenarios every real CLI is run through (issue: hermetic harness, item 4). Abstract steps;
// the fake model maps shell/write onto whatever tool each CLI offers. Paths are relative to the
// sandbox's work dir, which every pinned CLI resolves against its cwd.
import type { Scenario } from '../fake-model/server.js';

export interface HarnessScenario {
  name: string;
  /** What the test sends as the user's message(s); two entries means two turns. */
  prompts: string[];
  model: Scenario;
  /** Run with the CLI asking for permission (not bypassed), so a permission request appears. */
  askPermission?: boolean;
}

export const SCENARIOS: HarnessScenario[] = [
  { name: 'plain-text', prompts: ['Say hello.'], model: [[{ text: 'Hello!' }]] },
  {
    name: 'streamed-text',
    prompts: ['Explain briefly.'],
    model: [[{ thinking: 'A short answer will do.' }, { text: 'Here is a longer answer that arrives in several pieces, so the stream has many deltas to show.' }]],
  },
  {
    name: 'shell',
    prompts: ['Run a command.'],
    model: [[{ text: 'Running it.' }, { tool: 'shell', command: 'echo hello-from-shell' }], [{ text: 'It printed hello-from-shell.' }]],
  },
  {
    name: 'write-file',
    prompts: ['Create hello.txt.'],
    model: [[{ tool: 'write', path: 'hello.txt', content: 'hello file\n' }], [{ text: 'Wrote hello.txt.' }]],
  },
  {
    name: 'permission',
    prompts: ['Create notes.txt.'],
    askPermission: true,
    model: [[{ tool: 'write', path: 'notes.txt', content: 'notes\n' }], [{ text: 'Done.' }]],
  },
  {
    name: 'model-error',
    prompts: ['Say hello.'],
    // Fails once with a retryable status, then answers: the CLI's retry shows in the transcript.
    model: [[{ error: 500, times: 1, retryAfterMs: 10, message: 'fake upstream failure' }, { text: 'Hello after a retry.' }]],
  },
  {
    name: 'two-turns',
    prompts: ['Reply with exactly the single word FIRST.', 'Reply with exactly the single word SECOND.'],
    model: [[{ text: 'FIRST' }], [{ text: 'SECOND' }]],
  },
];
