// What an ACP agent offers, asked of the agent itself (GET /v1/agents/{agent}/models and /modes):
// a short-lived process with the daemon's environment, `initialize`, one `session/new` in a
// temporary directory, whose answer lists the modes and models; then the process group is killed.
// The initialize answer also refreshes the coverage row (images and the like, capabilities.ts).
// Bounded by ctx.timeoutMs; the process never outlives the call. Some agents keep a record of the
// throwaway session (it is never prompted).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processSpawnOptions } from '../process-options.js';
import type { ModeInfo, ModelList } from '../../schema/api.js';
import { awaitReady } from '../readiness.js';
import type { QueryContext, StartOptions } from '../types.js';
import { initialize, openSession, spawnAcp } from './connection.js';
import type { AcpDeps } from './driver.js';
import type { SessionSetup } from './native.js';
import { modelsOf, modesOf } from './settings.js';

export async function askAcp(ctx: QueryContext, deps: AcpDeps): Promise<SessionSetup> {
  const executable = await deps.locate();
  const cwd = await mkdtemp(join(tmpdir(), 'agentwire-acp-query-'));
  const options: StartOptions = { sessionId: 'query', cwd, env: {}, agentMode: 'default', permissionMode: 'default', logger: ctx.logger };
  const extra = (await deps.definition.session?.(options)) ?? {};
  const { peer, child } = await spawnAcp(
    { command: executable, args: [...deps.definition.args, ...(extra.args ?? [])], cwd, env: { ...extra.env }, ...processSpawnOptions(deps.limits, ctx.logger), boundary: ctx.boundary },
    { native: () => {}, onRequest: (r) => void peer.respondError(r.id, { code: -32601, message: 'agentwire only lists models and modes here' }).catch(() => {}) },
  );
  try {
    const work = async () => {
      const init = await initialize(peer, ctx.timeoutMs);
      deps.learn(init);
      return (await openSession(peer, init, { cwd, mcpServers: [] }, ctx.timeoutMs, () => {})).setup;
    };
    const outcome = await awaitReady(child, work, ctx.timeoutMs);
    if (outcome.ok) return outcome.value;
    if (outcome.reason === 'error') throw outcome.error;
    const { exit } = outcome;
    throw new Error(outcome.reason === 'timeout' ? `${deps.definition.title} did not answer within ${ctx.timeoutMs} ms` : `${deps.definition.title} exited (${exit.signal ?? `code ${exit.exitCode}`}): ${exit.stderr.head ?? ''}`);
  } finally {
    await child.kill();
    await rm(cwd, { recursive: true, force: true });
  }
}

export async function listAcpModels(ctx: QueryContext, deps: AcpDeps): Promise<ModelList> {
  const models = modelsOf(await askAcp(ctx, deps));
  // An agent that offers no model choice answers with the definition's list (often empty).
  return models.models.length > 0 ? models : (deps.definition.models ?? models);
}

export async function listAcpModes(ctx: QueryContext, deps: AcpDeps): Promise<ModeInfo[]> {
  return modesOf(await askAcp(ctx, deps));
}
