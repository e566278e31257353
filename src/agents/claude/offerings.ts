// Asking Claude Code what it offers: its answer to the SDK's `initialize` control request lists
// the models (`models`: value, displayName, supportedEffortLevels) and the agents a session can
// run as (`agents`: name, description). The CLI answers without credentials or a model call
// (0.4 s here) and exits when its stdin closes, so one short-lived process per question suffices.
import { rm } from 'node:fs/promises';
import { z } from 'zod';
import { agentProcessOptions } from '../../process/agent-env.js';
import { agentTempDir } from '../../process/agent-user.js';
import type { ModeInfo, ModelList } from '../../schema/api.js';
import type { QueryContext } from '../types.js';

const InitializeAnswer = z.object({
  type: z.literal('control_response'),
  response: z.object({
    subtype: z.literal('success'),
    request_id: z.literal('agentwire-query'),
    response: z.object({
      models: z
        .array(
          z.object({
            value: z.string(),
            displayName: z.string().optional(),
            supportsEffort: z.boolean().optional(),
            supportedEffortLevels: z.array(z.string()).optional(),
          }),
        )
        .default([]),
      agents: z.array(z.object({ name: z.string(), description: z.string().optional() })).default([]),
    }),
  }),
});
type InitializeAnswer = z.infer<typeof InitializeAnswer>['response']['response'];

const QUERY_ARGS = ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose'];

/** Runs `claude -p` with one initialize request on stdin and returns its answer. */
export async function askClaude(executable: string, ctx: QueryContext): Promise<InitializeAnswer> {
  // A throwaway cwd: the CLI may note the directory as a project; never the daemon's own.
  const cwd = await agentTempDir('agentwire-claude-query-', ctx.boundary.user);
  try {
    const { execa } = await import('execa');
    const run = await execa(executable, QUERY_ARGS, {
      cwd,
      ...agentProcessOptions(ctx.boundary),
      input: `${JSON.stringify({ type: 'control_request', request_id: 'agentwire-query', request: { subtype: 'initialize', hooks: null } })}\n`,
      timeout: ctx.timeoutMs,
      killSignal: 'SIGKILL',
      reject: false,
      maxBuffer: 4 * 1024 * 1024,
    });
    for (const line of String(run.stdout).split('\n')) {
      if (!line.includes('"control_response"')) continue;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch {
        continue;
      }
      const parsed = InitializeAnswer.safeParse(json);
      if (parsed.success) return parsed.data.response.response;
    }
    const why = run.timedOut ? `no answer within ${ctx.timeoutMs} ms` : `exit ${run.exitCode ?? run.signal}: ${String(run.stderr).split('\n')[0]}`;
    throw new Error(`Claude Code did not answer initialize (${why})`);
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

export function modelsFrom(answer: InitializeAnswer): ModelList {
  const models = answer.models.map((m) => ({
    id: m.value,
    ...(m.displayName ? { name: m.displayName } : {}),
    ...(m.supportsEffort && m.supportedEffortLevels?.length ? { variants: m.supportedEffortLevels } : {}),
  }));
  return { models, ...(models.some((m) => m.id === 'default') ? { defaultModel: 'default' } : {}) };
}

/** Each agent the CLI knows (built-in and the user's own) can be the session's main agent (`--agent`). */
export function modesFrom(answer: InitializeAnswer): ModeInfo[] {
  return answer.agents.map((a) => ({ id: a.name, name: a.name, description: a.description ?? '' }));
}
