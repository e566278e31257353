// How the mock agent is run: `node program.js` as a real child process, one per session, spoken to
// with MockIn lines on stdin (session.ts: MockSession).
import { VERSION } from '../../version.js';
import type { ProcessLimits } from '../process-options.js';
import { sameSpareOptions } from '../spare.js';
import type { AgentDriver } from '../types.js';
import { mockCapabilities } from './capabilities.js';
import { mockConverter } from './convert.js';
import { MockSession, PROGRAM } from './session.js';

/** The mock reports its agentMode back in session.started; it behaves the same in each. */
const MOCK_MODES = [
  { id: 'default', name: 'Default', description: 'The scripted mock agent.' },
  { id: 'build', name: 'Build', description: 'Same script; the mode is echoed in session.started.' },
  { id: 'plan', name: 'Plan', description: 'Same script; the mode is echoed in session.started.' },
];

export function createMockDriver(limits: ProcessLimits): AgentDriver {
  return {
    id: 'mock',
    capabilities: mockCapabilities,
    converter: mockConverter,
    bundled: { path: PROGRAM, version: VERSION },
    modes: MOCK_MODES,
    permissionModes: ['default', 'plan', 'bypass', 'acceptEdits'],
    models: { models: [{ id: 'mock-1', name: 'Mock 1' }], defaultModel: 'mock-1' },
    start: (options, sink) => MockSession.start(options, sink, limits),
    // cwd, model and mode are its command line: a spare serves the defaults it was started with.
    spareServes: sameSpareOptions,
  };
}
