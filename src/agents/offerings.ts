// What each agent offers a session: its models, its agent modes and the permission modes it
// honours (GET /v1/agents/{agent}/models and /modes), and the check of a create request against
// them. The lists come from the agent itself where its driver can ask (listModels/listModes spawn
// the CLI), cached, with the driver's built-in lists as the answer whenever asking is impossible
// (not installed, no adapter for the question, a timeout): a listing never fails because an agent
// is slow or missing. Nothing here knows an agent's format; drivers do the asking.
import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from '../errors.js';
import type { AgentId } from '../schema/agents.js';
import type { CreateSessionRequest, ModeInfo, ModelList, ModelsResponse, ModesResponse } from '../schema/api.js';
import type { AgentBoundary } from '../process/agent-env.js';
import { requireDriver, type AgentRegistry } from './registry.js';
import type { AgentDriver, QueryContext } from './types.js';

export interface OfferingsOptions {
  registry: AgentRegistry;
  /** Who the agent is asked as, and the daemon environment it starts from. */
  boundary: AgentBoundary;
  logger: Pick<FastifyBaseLogger, 'debug' | 'info' | 'warn'>;
  /** Longest time one ask may take before the built-in list answers. */
  timeoutMs: number;
  /** How long an agent's own answer is reused (a failed ask is retried after `retryMs`). */
  cacheMs?: number;
  retryMs?: number;
}

type Asked<T> = { value: T; source: 'agent' | 'builtin' };
type Entry<T> = { at: number; ttl: number; promise: Promise<Asked<T>> };

const DEFAULT_CACHE_MS = 10 * 60_000;
const DEFAULT_RETRY_MS = 30_000;

export class AgentOfferings {
  private readonly models = new Map<AgentId, Entry<ModelList>>();
  private readonly modes = new Map<AgentId, Entry<ModeInfo[]>>();

  constructor(private readonly options: OfferingsOptions) {}

  async listModels(agent: AgentId): Promise<ModelsResponse> {
    const driver = this.driver(agent);
    const asked = await this.cached(this.models, driver, driver.models, driver.listModels?.bind(driver));
    return { ...asked.value, source: asked.source };
  }

  async listModes(agent: AgentId): Promise<ModesResponse> {
    const driver = this.driver(agent);
    const asked = await this.cached(this.modes, driver, [...driver.modes], driver.listModes?.bind(driver));
    return {
      modes: mergeModes(driver.modes, asked.value),
      defaultMode: driver.modes[0]!.id,
      permissionModes: [...driver.permissionModes],
      source: asked.source,
    };
  }

  /**
   * The request with agentMode and permissionMode filled in with the agent's defaults, or a 400
   * naming the valid values. An agentMode outside the built-in list costs one ask of the agent
   * (custom agents exist only there). `default` is always accepted and means the agent's own
   * default mode (clients written for the reference API send it). `model` is not checked: agents take full model ids and
   * provider-specific names no list can hold; the agent itself reports a bad one as an error.
   */
  async resolve(request: CreateSessionRequest): Promise<CreateSessionRequest & { agentMode: string; permissionMode: string }> {
    const driver = this.driver(request.agent, 'body.agent');
    const permissionMode = request.permissionMode ?? driver.permissionModes[0]!;
    if (!driver.permissionModes.includes(permissionMode)) {
      throw invalid(request.agent, 'permissionMode', permissionMode, driver.permissionModes);
    }
    if (request.variant !== undefined) await this.checkVariant(driver, request.model, request.variant);
    const agentMode = request.agentMode ?? driver.modes[0]!.id;
    // `default` is every agent's own default mode, whatever the agent calls it (Amp: medium).
    if (agentMode !== 'default' && !driver.modes.some((m) => m.id === agentMode)) {
      const { modes } = await this.listModes(request.agent);
      if (!modes.some((m) => m.id === agentMode)) throw invalid(request.agent, 'agentMode', agentMode, modes.map((m) => m.id));
    }
    return { ...request, agentMode, permissionMode };
  }

  /** A variant must be one the model lists; a model no list knows (a full id, a custom provider's)
   *  is left to the agent. Costs one (cached) ask of the agent, only when a variant is given. */
  private async checkVariant(driver: AgentDriver, model: string | undefined, variant: string): Promise<void> {
    if (!driver.capabilities.variants) {
      throw new ApiError('invalid_request', `Agent '${driver.id}' has no variants; leave 'variant' out.`, { agent: driver.id, field: 'variant' });
    }
    const list = await this.listModels(driver.id);
    const id = model ?? list.defaultModel;
    const variants = list.models.find((m) => m.id === id)?.variants;
    if (variants && !variants.includes(variant)) {
      const problem = invalid(driver.id, 'variant', variant, variants);
      throw new ApiError('invalid_request', `${problem.detail.slice(0, -1)} (model ${id}).`, { ...problem.context, model: id });
    }
  }

  private driver(agent: AgentId, field: 'body.agent' | 'path.agent' = 'path.agent'): AgentDriver {
    return requireDriver(this.options.registry, agent, field);
  }

  /** One ask per agent at a time; answers kept `cacheMs`, fallbacks `retryMs`. */
  private cached<T>(map: Map<AgentId, Entry<T>>, driver: AgentDriver, builtin: T, ask: ((ctx: QueryContext) => Promise<T>) | undefined): Promise<Asked<T>> {
    if (!ask) return Promise.resolve({ value: builtin, source: 'builtin' });
    const now = Date.now();
    const hit = map.get(driver.id);
    if (hit && now - hit.at < hit.ttl) return hit.promise;
    const entry: Entry<T> = { at: now, ttl: this.options.cacheMs ?? DEFAULT_CACHE_MS, promise: Promise.resolve(undefined as never) };
    entry.promise = this.ask(driver, ask).then((value) => ({ value, source: 'agent' as const }), (err: unknown) => {
      entry.ttl = this.options.retryMs ?? DEFAULT_RETRY_MS;
      this.options.logger.info({ agent: driver.id, err: (err as Error).message }, 'could not ask the agent; answering with the built-in list');
      return { value: builtin, source: 'builtin' as const };
    });
    map.set(driver.id, entry);
    return entry.promise;
  }

  private async ask<T>(driver: AgentDriver, ask: (ctx: QueryContext) => Promise<T>): Promise<T> {
    const { boundary, logger, timeoutMs } = this.options;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
    });
    try {
      return await Promise.race([ask({ boundary, logger, timeoutMs }), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The built-in modes first (their descriptions win), then what only the agent knows. */
function mergeModes(builtin: readonly ModeInfo[], asked: readonly ModeInfo[]): ModeInfo[] {
  const seen = new Set(builtin.map((m) => m.id));
  return [...builtin, ...asked.filter((m) => !seen.has(m.id) && seen.add(m.id))];
}

function invalid(agent: AgentId, field: string, value: string, valid: readonly string[]): ApiError {
  return new ApiError('invalid_request', `${field} '${value}' is not one ${agent} accepts; valid: ${valid.join(', ')}.`, { agent, field, valid: [...valid] });
}
