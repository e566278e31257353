// agentMode → Codex "collaboration mode". 0.171.0 has two presets, `default` and `plan`, listed by
// the experimental `collaborationMode/list` (needs `initialize {capabilities: {experimentalApi:
// true}}`) and chosen per turn with turn/start's experimental `collaborationMode {mode, settings:
// {model, reasoning_effort, developer_instructions}}` (v2/TurnStartParams). In plan mode Codex plans
// instead of editing and offers the model `request_user_input` (in default mode the tool answers
// "unavailable in Default mode"), which is how a Codex session asks the client questions.
//
// Only a `plan` session turns the experimental API on: a default session speaks exactly the stable
// protocol the recorded fixtures were made with.
import type { ModeInfo } from '../../schema/api.js';

/** What `collaborationMode/list` answers on 0.171.0 (names from it; descriptions ours). */
export const CODEX_MODES: readonly ModeInfo[] = [
  { id: 'default', name: 'Default', description: "Codex's agent: it works on the task." },
  { id: 'plan', name: 'Plan', description: 'Codex plans before acting and may ask the client questions (request_user_input).' },
];

/** True when the session needs `experimentalApi` (a collaboration mode other than the default). */
export const needsExperimentalApi = (agentMode: string) => agentMode !== 'default';

/**
 * turn/start's `collaborationMode` for a non-default agentMode, else undefined. `model` is the
 * thread's model (thread/start's answer): the settings require one. The preset's instructions are
 * Codex's own (`developer_instructions: null`); the effort is the session's variant, else the
 * model's default (null).
 */
export function collaborationMode(agentMode: string, model: string, variant: string | undefined): Record<string, unknown> | undefined {
  if (agentMode === 'default') return undefined;
  return { mode: agentMode, settings: { model, reasoning_effort: variant ?? null, developer_instructions: null } };
}

/** `collaborationMode/list`'s answer → ModeInfo (descriptions from CODEX_MODES where known). */
export function modesFromList(result: unknown): ModeInfo[] {
  const data = typeof result === 'object' && result !== null && Array.isArray((result as { data?: unknown }).data) ? (result as { data: unknown[] }).data : [];
  const out: ModeInfo[] = [];
  for (const entry of data) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { mode, name } = entry as { mode?: unknown; name?: unknown };
    if (typeof mode !== 'string' || typeof name !== 'string') continue;
    const known = CODEX_MODES.find((m) => m.id === mode);
    out.push({ id: mode, name, description: known?.description ?? `Codex's ${name} collaboration mode.` });
  }
  // The default first (the contract: the first is the default).
  return out.sort((a, b) => Number(b.id === 'default') - Number(a.id === 'default'));
}
