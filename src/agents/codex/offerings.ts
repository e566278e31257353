// What Codex offers, asked of Codex itself (GET /v1/agents/codex/models and /modes): a short-lived
// `codex app-server` with the daemon's environment (so the daemon's CODEX_HOME, provider and keys
// decide the answer), `initialize` → `initialized` → one query, then the process group is killed.
// The whole exchange is bounded by ctx.timeoutMs; the process never outlives the call.
//
//   models   `model/list {cursor?}` → {data: Model[], nextCursor} (v2/ModelListResponse), paged
//            until nextCursor is null. Hidden models are left out (includeHidden false), as
//            Codex's own picker does.
//   modes    `collaborationMode/list {}` → {data: [{name, mode, model, reasoning_effort}]}; an
//            experimental method, so that one initialize sets `experimentalApi`.
import { rm } from 'node:fs/promises';
import { agentTempDir } from '../../process/agent-user.js';
import { z } from 'zod';
import type { ChildProcess } from '../../process/spawn.js';
import { processSpawnOptions, type ProcessLimits } from '../process-options.js';
import type { ModeInfo, ModelInfo, ModelList } from '../../schema/api.js';
import { awaitReady } from '../readiness.js';
import type { QueryContext } from '../types.js';
import { JsonRpcPeer } from '../json-rpc.js';
import { modesFromList } from './modes.js';

/** Enough pages for any catalogue; a server that keeps answering a cursor is cut off here. */
const MAX_PAGES = 20;

/** v2/ModelListResponse, as far as it is read (loose: other fields are kept, unchecked). */
const ModelListPage = z.looseObject({
  data: z.array(
    z.looseObject({
      id: z.string(),
      displayName: z.string().optional(),
      hidden: z.boolean().optional(),
      isDefault: z.boolean().optional(),
      defaultReasoningEffort: z.string().nullable().optional(),
      supportedReasoningEfforts: z.array(z.looseObject({ reasoningEffort: z.string() })).optional(),
    }),
  ),
  nextCursor: z.string().nullable().optional(),
});

/** How `listModels`/`listModes` reach the binary (the driver's locator and limits). */
export interface CatalogueDeps {
  limits: ProcessLimits;
  locate: () => Promise<string>;
  /** Told the spawned process's pid (tests check its group is gone afterwards). */
  onSpawn?: (pid: number | undefined) => void;
  /** app-server's argv and initialize's clientInfo (the driver's, so both speak alike). */
  args: readonly string[];
  clientInfo: unknown;
}

/**
 * Spawns app-server, initializes it and runs `ask`; the process group is killed whatever happens.
 * Rejects on a timeout (ctx.timeoutMs for the whole exchange), an exit or an error answer.
 */
export async function askCodex<T>(ctx: QueryContext, deps: CatalogueDeps, experimental: boolean, ask: (rpc: JsonRpcPeer, timeoutMs: number) => Promise<T>): Promise<T> {
  const executable = await deps.locate();
  // A fresh cwd of its own, not the shared temp dir itself: a project file another user put
  // there (AGENTS.md, .codex/) must not reach the agent (docs/security.md, "Planted files").
  const cwd = await agentTempDir('agentwire-codex-query-', ctx.boundary.user);
  const spawned = await JsonRpcPeer.spawn(
    { command: executable, args: [...deps.args], cwd, env: {}, ...processSpawnOptions(deps.limits, ctx.logger), boundary: ctx.boundary },
    { native: () => {}, onRequest: (r) => void peer.respondError(r.id, { code: -32601, message: 'agentwire only lists models and modes here' }).catch(() => {}) },
  ).catch(async (err: unknown) => {
    await rm(cwd, { recursive: true, force: true });
    throw err;
  });
  const { peer, child }: { peer: JsonRpcPeer; child: ChildProcess } = spawned;
  deps.onSpawn?.(child.pid);
  try {
    const work = async () => {
      await peer.request('initialize', { clientInfo: deps.clientInfo, capabilities: experimental ? { experimentalApi: true } : null }, ctx.timeoutMs);
      await peer.notify('initialized');
      return ask(peer, ctx.timeoutMs);
    };
    const outcome = await awaitReady(child, work, ctx.timeoutMs);
    if (outcome.ok) return outcome.value;
    if (outcome.reason === 'error') throw outcome.error;
    const { exit } = outcome;
    throw new Error(outcome.reason === 'timeout' ? `codex app-server did not answer within ${ctx.timeoutMs} ms` : `codex app-server exited (${exit.signal ?? `code ${exit.exitCode}`}): ${exit.stderr.head ?? ''}`);
  } finally {
    await child.kill();
    await rm(cwd, { recursive: true, force: true });
  }
}

/** `model/list`, every page, as agentwire's ModelList. */
export async function listCodexModels(ctx: QueryContext, deps: CatalogueDeps): Promise<ModelList> {
  return askCodex(ctx, deps, false, async (rpc, timeoutMs) => {
    const models: ModelInfo[] = [];
    let defaultModel: string | undefined;
    let cursor: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const parsed = ModelListPage.safeParse(await rpc.request('model/list', cursor ? { cursor } : {}, timeoutMs));
      if (!parsed.success) throw new Error(`model/list answered an unexpected shape: ${parsed.error.message}`);
      for (const m of parsed.data.data) {
        if (m.hidden) continue;
        models.push(modelInfo(m));
        if (m.isDefault) defaultModel ??= m.id;
      }
      cursor = parsed.data.nextCursor ?? null;
      if (!cursor) break;
    }
    return defaultModel ? { models, defaultModel } : { models };
  });
}

/** `collaborationMode/list` as agentwire's ModeInfo list (default first). */
export async function listCodexModes(ctx: QueryContext, deps: CatalogueDeps): Promise<ModeInfo[]> {
  return askCodex(ctx, deps, true, async (rpc, timeoutMs) => modesFromList(await rpc.request('collaborationMode/list', {}, timeoutMs)));
}

function modelInfo(m: z.infer<typeof ModelListPage>['data'][number]): ModelInfo {
  const variants = (m.supportedReasoningEfforts ?? []).map((e) => e.reasoningEffort);
  return {
    id: m.id,
    ...(m.displayName ? { name: m.displayName } : {}),
    ...(variants.length > 0 ? { variants } : {}),
    ...(m.defaultReasoningEffort ? { defaultVariant: m.defaultReasoningEffort } : {}),
  };
}
