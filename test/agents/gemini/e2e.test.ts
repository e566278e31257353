// Gemini CLI end to end through the HTTP API: the real pinned `gemini --acp` against the fake
// model's Gemini API (test/agents/acp/builtin-e2e.ts holds the scenarios). GOOGLE_GEMINI_BASE_URL points it at the
// fake, which makes Gemini CLI use its "gateway" auth with GEMINI_API_KEY.
import { acpE2e } from '../acp/builtin-e2e.js';

acpE2e({
  agent: 'gemini',
  env: (fake) => ({ GEMINI_API_KEY: 'fake-gemini-key', GOOGLE_GEMINI_BASE_URL: fake.url }),
  // A fixed model: the default, `auto`, first asks a classifier model call to pick one.
  model: 'gemini-2.5-pro',
  // Usage statistics are on unless a settings file says otherwise (docs/gemini.md).
  homeFiles: { '.gemini/settings.json': { privacy: { usageStatisticsEnabled: false } } },
});
