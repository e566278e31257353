// What a server offers, asked of a short-lived `opencode serve` started with an agent's
// environment (src/process/agent-env.ts) in an empty temporary directory (so no project config applies), killed afterwards:
// models from GET /config/providers (the default: GET /config's `model`), agents (modes) from GET /agent.
import { rmSync } from 'node:fs';
import { agentTempDir } from '../../process/agent-user.js';
import type { ProcessLimits } from '../process-options.js';
import type { ModeInfo, ModelInfo, ModelList } from '../../schema/api.js';
import type { QueryContext } from '../types.js';
import { callJson } from './http.js';
import { startServer } from './server.js';
import { isObject } from '../../util/is-object.js';

async function withServer<T>(locate: () => Promise<string>, limits: ProcessLimits, ctx: QueryContext, ask: (url: string) => Promise<T>): Promise<T> {
  const executable = await locate();
  const dir = await agentTempDir('agentwire-opencode-', ctx.boundary.user);
  const server = await startServer(executable, dir, {}, { ...limits, startTimeoutMs: ctx.timeoutMs, boundary: ctx.boundary }, ctx.logger);
  try {
    return await ask(server.url);
  } finally {
    await server.proc.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function listModels(locate: () => Promise<string>, limits: ProcessLimits, ctx: QueryContext): Promise<ModelList> {
  return withServer(locate, limits, ctx, async (url) => {
    const { json } = await callJson(url, 'GET', '/config/providers', undefined, ctx.timeoutMs);
    // The model a session gets without one is the config's `model`; /config/providers only has
    // each provider's own default.
    const config = await callJson(url, 'GET', '/config', undefined, ctx.timeoutMs);
    const configured = isObject(config.json) && typeof config.json.model === 'string' ? config.json.model : undefined;
    const list = modelsOf(json);
    return configured ? { ...list, defaultModel: configured } : list;
  });
}

/** GET /config/providers → `provider/model` ids (the spelling a session's `model` takes). */
export function modelsOf(json: unknown): ModelList {
  const providers = isObject(json) && Array.isArray(json.providers) ? json.providers : [];
  const models: ModelInfo[] = [];
  for (const p of providers) {
    if (!isObject(p) || typeof p.id !== 'string' || !isObject(p.models)) continue;
    for (const [key, m] of Object.entries(p.models)) {
      const name = isObject(m) && typeof m.name === 'string' ? m.name : undefined;
      const variants = isObject(m) && isObject(m.variants) ? Object.keys(m.variants) : [];
      models.push({ id: `${p.id}/${key}`, ...(name ? { name } : {}), ...(variants.length > 0 ? { variants } : {}) });
    }
  }
  const defaults = isObject(json) && isObject(json.default) ? Object.entries(json.default) : [];
  const first = defaults.find(([, model]) => typeof model === 'string');
  return { models, ...(first ? { defaultModel: `${first[0]}/${String(first[1])}` } : {}) };
}

export async function listModes(locate: () => Promise<string>, limits: ProcessLimits, ctx: QueryContext): Promise<ModeInfo[]> {
  return withServer(locate, limits, ctx, async (url) => {
    const { json } = await callJson(url, 'GET', '/agent', undefined, ctx.timeoutMs);
    return modesOf(json);
  });
}

/** GET /agent → the agents a session can be run as: primary ones that are not hidden. */
export function modesOf(json: unknown): ModeInfo[] {
  const agents = Array.isArray(json) ? json : [];
  return agents.flatMap((a): ModeInfo[] => {
    if (!isObject(a) || typeof a.name !== 'string' || a.mode === 'subagent' || a.hidden === true) return [];
    return [{ id: a.name, name: a.name, description: typeof a.description === 'string' ? a.description : '' }];
  });
}
