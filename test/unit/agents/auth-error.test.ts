// Each converter recognises its agent's authentication failure from the native message alone (pure),
// as recorded from the real CLIs against the fake model answering 401 (test/agents/auth-e2e.test.ts),
// and leaves other failures with their own codes.
import { describe, expect, it } from 'vitest';
import { createAcpConverter } from '../../../src/agents/acp/convert.js';
import { claudeConverter } from '../../../src/agents/claude/convert.js';
import { codexConverter } from '../../../src/agents/codex/convert.js';
import { opencodeConverter } from '../../../src/agents/opencode/convert.js';
import type { Converter, Draft } from '../../../src/agents/types.js';

function errors<S>(converter: Converter<S>, ...lines: unknown[]): { code: string; message: string; details?: unknown }[] {
  let state = converter.initial();
  const out: Draft[] = [];
  for (const line of lines) {
    const r = converter.convert(state, line);
    state = r.state;
    out.push(...r.events);
  }
  expect(out.filter((e) => e.type === 'agent.unparsed')).toEqual([]);
  return out.flatMap((e) => (e.type === 'error' ? [e.data as { code: string; message: string; details?: unknown }] : []));
}

const claudeResult = (result: string) => ({ type: 'result', subtype: 'success', is_error: true, result, duration_ms: 5, num_turns: 1, total_cost_usd: 0, session_id: 's' });

describe('agent_not_authenticated, recognised by each converter', () => {
  it('claude: "Not logged in · Please run /login" and "Invalid API key" (subtype success)', () => {
    for (const text of ['Not logged in · Please run /login', 'Invalid API key · Fix external API key']) {
      const [e] = errors(claudeConverter, claudeResult(text));
      expect(e).toMatchObject({ code: 'agent_not_authenticated', details: { native_code: 'claude_success', native_message: text } });
      expect(e!.message).toMatch(/^claude is not authenticated \(.+\): set ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN or ANTHROPIC_AUTH_TOKEN in the session's env/);
    }
    expect(errors(claudeConverter, claudeResult('API Error: 500 upstream down'))).toMatchObject([{ code: 'claude_success' }]);
  });

  it('codex: a final error with HTTP 401 in its codexErrorInfo; a retrying one and a 500 keep codex_error', () => {
    const note = (status: number, willRetry: boolean) => ({
      jsonrpc: '2.0',
      method: 'error',
      params: { threadId: 't', turnId: 'u', willRetry, error: { message: `unexpected status ${status}`, codexErrorInfo: { httpConnectionFailed: { httpStatusCode: status } }, additionalDetails: null } },
    });
    const [e] = errors(codexConverter, note(401, false));
    expect(e).toMatchObject({ code: 'agent_not_authenticated', details: { native_code: 'codex_error' } });
    expect(e!.message).toContain('set OPENAI_API_KEY or CODEX_API_KEY');
    expect(errors(codexConverter, note(401, true), note(500, false)).map((x) => x.code)).toEqual(['codex_error', 'codex_error']);
  });

  it('opencode: APIError with statusCode 401, and ProviderAuthError; other errors keep their names', () => {
    const sessionError = (name: string, data: Record<string, unknown>) => ({ type: 'session.error', properties: { sessionID: 'ses_1', error: { name, data } } });
    expect(errors(opencodeConverter, sessionError('APIError', { message: 'invalid x-api-key', statusCode: 401, isRetryable: false }))).toMatchObject([
      { code: 'agent_not_authenticated', details: { native_code: 'opencode_APIError', statusCode: 401 } },
    ]);
    expect(errors(opencodeConverter, sessionError('ProviderAuthError', { providerID: 'anthropic', message: 'no key' }))).toMatchObject([{ code: 'agent_not_authenticated' }]);
    expect(errors(opencodeConverter, sessionError('APIError', { message: 'bad request', statusCode: 400, isRetryable: false }))).toMatchObject([{ code: 'opencode_APIError' }]);
  });

  it('ACP (gemini, qwen): 401 as the code, UNAUTHENTICATED, data.details "401 …", auth_required; other errors keep acp_error', () => {
    const answer = (error: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 3, error });
    const gemini = createAcpConverter({ agent: 'gemini' });
    const [g] = errors(gemini, answer({ code: 401, message: '{"error":{"code":401,"status":"UNAUTHENTICATED"}}' }));
    expect(g).toMatchObject({ code: 'agent_not_authenticated', details: { native_code: 'acp_error', code: 401 } });
    expect(g!.message).toMatch(/^gemini is not authenticated .*set GEMINI_API_KEY or GOOGLE_API_KEY/);
    const qwen = createAcpConverter({ agent: 'qwen' });
    const [q] = errors(qwen, answer({ code: -32603, message: 'Internal error', data: { details: '401 invalid x-api-key' } }));
    expect(q).toMatchObject({ code: 'agent_not_authenticated', details: { native_message: '401 invalid x-api-key' } });
    expect(errors(createAcpConverter(), answer({ code: -32000, message: 'Authentication required' }))).toMatchObject([{ code: 'agent_not_authenticated' }]);
    expect(errors(gemini, answer({ code: 400, message: 'fake invalid request' }))).toMatchObject([{ code: 'acp_error' }]);
  });
});
