// The models a Codex session can name when Codex cannot be asked (the daemon's fallback for GET
// /v1/agents/codex/models). This is what `model/list` answers on the pinned 0.171.0 offline: the
// preset catalogue bundled in the binary (no model request is made for it; checked against the
// real binary by test/agents/codex/offerings.test.ts). Hidden entries (gpt-daybreak-*, codex-auto-review)
// are left out, as in Codex's picker. `variants` are the reasoning efforts (turn/start `effort`).
// With an account or provider that serves its own catalogue the live answer may differ; that is
// what listModels asks.
import type { ModelList } from '../../schema/api.js';

const UP_TO_ULTRA = ['low', 'medium', 'high', 'xhigh', 'max', 'ultra'];
const UP_TO_MAX = ['low', 'medium', 'high', 'xhigh', 'max'];

export const CODEX_MODELS: ModelList = {
  models: [
    { id: 'gpt-6.2-sol', name: 'GPT-6.2-Sol', variants: UP_TO_ULTRA, defaultVariant: 'low' },
    { id: 'gpt-6.2-astra', name: 'GPT-6.2-Astra', variants: UP_TO_ULTRA, defaultVariant: 'low' },
    { id: 'gpt-6.1-terra', name: 'GPT-6.1 Terra', variants: UP_TO_ULTRA, defaultVariant: 'low' },
    { id: 'gpt-6.1-sol', name: 'GPT-6.1-Sol', variants: UP_TO_ULTRA, defaultVariant: 'low' },
    { id: 'gpt-6-astra', name: 'GPT-6-Astra', variants: UP_TO_ULTRA, defaultVariant: 'low' },
    { id: 'gpt-6-sol', name: 'GPT-6-Sol', variants: UP_TO_ULTRA, defaultVariant: 'medium' },
    { id: 'gpt-6-luna', name: 'GPT-6-Luna', variants: UP_TO_MAX, defaultVariant: 'medium' },
    { id: 'gpt-5.6-sol', name: 'GPT-5.6-Sol', variants: UP_TO_ULTRA, defaultVariant: 'low' },
    { id: 'gpt-5.6-terra', name: 'GPT-5.6-Terra', variants: UP_TO_ULTRA, defaultVariant: 'medium' },
    { id: 'gpt-5.6-luna', name: 'GPT-5.6-Luna', variants: UP_TO_MAX, defaultVariant: 'medium' },
    { id: 'gpt-5.5', name: 'GPT-5.5', variants: ['low', 'medium', 'high', 'xhigh'], defaultVariant: 'medium' },
  ],
  defaultModel: 'gpt-6.2-sol',
};
