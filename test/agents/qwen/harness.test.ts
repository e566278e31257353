// Qwen Code alone over ACP through every harness scenario (test/agents/acp/harness-clis.ts), compared with
// test/agents/qwen/fixtures/recorded/. RECORD_FIXTURES=1 rewrites the recordings.
import { acpHarness, QWEN } from '../acp/harness-clis.js';

acpHarness(QWEN);
