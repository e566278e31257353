// Qwen Code end to end through the HTTP API: the real pinned `qwen --acp` against the fake model's
// OpenAI Chat Completions API (test/agents/acp/builtin-e2e.ts holds the scenarios), pointed there by
// OPENAI_BASE_URL with OPENAI_API_KEY and OPENAI_MODEL.
import { acpE2e } from '../acp/builtin-e2e.js';

acpE2e({
  agent: 'qwen',
  env: (fake) => ({ OPENAI_API_KEY: 'sk-fake-qwen', OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_MODEL: 'fake-model' }),
  // Its write_file refuses relative paths.
  absolutePaths: true,
  settleShell: true,
  forks: true,
});
