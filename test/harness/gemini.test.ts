// Gemini CLI alone over ACP through every harness scenario (acp-clis.ts), compared with
// test/fixtures/gemini/recorded/. RECORD_FIXTURES=1 rewrites the recordings.
import { acpHarness, GEMINI } from './acp-clis.js';

acpHarness(GEMINI);
