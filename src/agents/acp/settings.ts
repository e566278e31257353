// A session's agentMode and model, the ACP way. An agent offers modes as session/new `modes`
// (set with session/set_mode) and models either as a session config option of category `model`
// (session/set_config_option, protocol 1) or as the older unstable `models` state
// (session/set_model); a mode may also be a config option of category `mode`. Whatever it
// offers is also what GET /v1/agents/{agent}/modes and /models list (modesOf, modelsOf).
import { ApiError } from '../../errors.js';
import type { JsonRpcPeer } from '../json-rpc.js';
import type { ModeInfo, ModelList } from '../../schema/api.js';
import type { ConfigOption, SessionSetup } from './native.js';

/** The values of a select config option, flat or grouped. */
function values(option: ConfigOption): { value: string; name?: string | undefined; description?: string | null | undefined }[] {
  return (option.options ?? []).flatMap((o) => (o.options ? o.options : typeof o.value === 'string' ? [{ ...o, value: o.value }] : []));
}

const optionOf = (setup: SessionSetup, category: string) => setup.configOptions?.find((o) => o.category === category && (o.type ?? 'select') === 'select');

export function modesOf(setup: SessionSetup): ModeInfo[] {
  if (setup.modes) return setup.modes.availableModes.map((m) => ({ id: m.id, name: m.name, description: m.description ?? '' }));
  const option = optionOf(setup, 'mode');
  return option ? values(option).map((v) => ({ id: v.value, name: v.name ?? v.value, description: v.description ?? '' })) : [];
}

export function modelsOf(setup: SessionSetup): ModelList {
  const option = optionOf(setup, 'model');
  if (option) {
    const models = values(option).map((v) => ({ id: v.value, ...(v.name ? { name: v.name } : {}) }));
    return typeof option.currentValue === 'string' ? { models, defaultModel: option.currentValue } : { models };
  }
  if (setup.models) {
    const models = setup.models.availableModels.map((m) => ({ id: m.modelId, ...(m.name ? { name: m.name } : {}) }));
    return { models, defaultModel: setup.models.currentModelId };
  }
  return { models: [] };
}

/**
 * Applies the session's agentMode (unless `default`: the agent's own) and model (when given).
 * A value the agent does not offer fails the start with a message naming what it offers.
 */
export async function applySettings(
  rpc: JsonRpcPeer,
  sessionId: string,
  setup: SessionSetup,
  wanted: { agentMode: string; model?: string | undefined },
  timeoutMs: number,
  agent: string,
): Promise<void> {
  if (wanted.agentMode !== 'default') {
    const offered = modesOf(setup).map((m) => m.id);
    if (!offered.includes(wanted.agentMode)) throw refuse(agent, 'agentMode', wanted.agentMode, offered);
    const option = setup.modes ? undefined : optionOf(setup, 'mode');
    if (option) await rpc.request('session/set_config_option', { sessionId, configId: option.id, value: wanted.agentMode }, timeoutMs);
    else if (setup.modes?.currentModeId !== wanted.agentMode) await rpc.request('session/set_mode', { sessionId, modeId: wanted.agentMode }, timeoutMs);
  }
  if (wanted.model) {
    const option = optionOf(setup, 'model');
    const offered = modelsOf(setup).models.map((m) => m.id);
    if (offered.length > 0 && !offered.includes(wanted.model)) throw refuse(agent, 'model', wanted.model, offered);
    if (option) await rpc.request('session/set_config_option', { sessionId, configId: option.id, value: wanted.model }, timeoutMs);
    else if (setup.models) await rpc.request('session/set_model', { sessionId, modelId: wanted.model }, timeoutMs);
    else throw refuse(agent, 'model', wanted.model, []);
  }
}

function refuse(agent: string, field: string, value: string, offered: string[]): ApiError {
  const what = offered.length > 0 ? `it offers: ${offered.join(', ')}` : `it offers no ${field} choice`;
  return new ApiError('invalid_request', `${field} '${value}' is not one ${agent} offers; ${what}.`, { agent, field, valid: offered });
}
