// Gemini CLI alone over ACP through every harness scenario (test/agents/acp/harness-clis.ts), compared with
// test/agents/gemini/fixtures/recorded/. RECORD_FIXTURES=1 rewrites the recordings.
import { acpHarness, GEMINI } from '../acp/harness-clis.js';

acpHarness(GEMINI);
