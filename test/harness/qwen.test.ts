// Qwen Code alone over ACP through every harness scenario (acp-clis.ts), compared with
// test/fixtures/qwen/recorded/. RECORD_FIXTURES=1 rewrites the recordings.
import { acpHarness, QWEN } from './acp-clis.js';

acpHarness(QWEN);
