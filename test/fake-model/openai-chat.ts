// OpenAI Chat Completions: POST /v1/chat/completions (SSE `chat.completion.chunk`s ending in
// `data: [DONE]` when `stream: true`, a `chat.completion` otherwise), as OpenCode's bundled
// `@ai-sdk/openai-compatible` provider speaks it; and the OpenAI flavour of GET /v1/models.
import { decide, play, type Exchange } from './exchange.js';
import { countModelTurns } from './scenario.js';
import { openaiError, sendOpenaiError } from './openai-responses.js';
import { chatTools, type Block } from './tools.js';
import { asList, asObj, nowSeconds, sendJson, sleep, splitChars, splitText, sseFrame, startSse, tokens } from './wire.js';

/** Model turns already in the history: runs of assistant messages (a trailing one is a prefill). */
export function chatTurnIndex(body: Record<string, unknown>): number {
  const messages = asList(body.messages).map(asObj);
  return countModelTurns(messages, (m) => (m.role === 'assistant' ? 'model' : m.role === 'system' || m.role === 'developer' ? 'skip' : 'other'), true);
}

interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export async function handleChat(ex: Exchange): Promise<void> {
  const body = ex.body;
  const decision = decide(ex, chatTools(body), chatTurnIndex(body));
  const requestId = ex.ids.requestId();
  if (decision.kind === 'error' && !(decision.error.inStream && body.stream === true)) {
    return sendOpenaiError(ex, decision.error, requestId);
  }
  const blocks = decision.kind === 'error' ? decision.before : decision.blocks;
  const calls = new Map<Block, ToolCall>();
  for (const b of blocks) {
    if (b.type === 'tool') {
      calls.set(b, { id: ex.ids.call(), type: 'function', function: { name: b.name, arguments: JSON.stringify(b.args) } });
    }
  }
  const text = blocks.map((b) => (b.type === 'text' ? b.text : '')).join('');
  const reasoning = blocks.map((b) => (b.type === 'thinking' ? b.text : '')).join('');
  const finish_reason = calls.size ? 'tool_calls' : 'stop';
  const prompt_tokens = tokens(JSON.stringify([body.messages ?? [], body.tools ?? []]));
  const reasoning_tokens = reasoning ? tokens(reasoning) : 0;
  const completion_tokens = tokens(text + JSON.stringify([...calls.values()])) + reasoning_tokens;
  const usage = {
    prompt_tokens,
    completion_tokens,
    total_tokens: prompt_tokens + completion_tokens,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens },
  };
  const head = {
    id: ex.ids.chat(),
    created: nowSeconds(),
    model: typeof body.model === 'string' ? body.model : 'gpt-fake',
    system_fingerprint: 'fp_fakemodel',
  };

  if (body.stream !== true) {
    for (const b of blocks) if (b.type === 'sleep') await sleep(b.ms);
    const message: Record<string, unknown> = { role: 'assistant', content: text || null, refusal: null };
    if (reasoning) message.reasoning_content = reasoning;
    if (calls.size) message.tool_calls = [...calls.values()];
    const choice = { index: 0, message, logprobs: null, finish_reason };
    return sendJson(ex.res, 200, { ...head, object: 'chat.completion', choices: [choice], usage }, { 'x-request-id': requestId });
  }

  const includeUsage = asObj(body.stream_options).include_usage === true;
  startSse(ex.res, { 'x-request-id': requestId });
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    sseFrame(ex.res, null, {
      ...head,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
    });
  // The first delta carries the role: alone with empty content before text, as OpenAI does, or
  // with `content: null` on the first reasoning/tool-call delta, so no empty text part appears.
  let roleSent = false;
  const send = (delta: Record<string, unknown>) => {
    chunk(roleSent ? delta : { role: 'assistant', content: null, ...delta });
    roleSent = true;
  };
  if (blocks.find((b) => b.type !== 'sleep')?.type === 'text') send({ content: '' });

  let toolIndex = 0;
  const streamed = await play(ex, blocks, (b) => {
    if (b.type === 'text') for (const t of splitText(b.text)) send({ content: t });
    else if (b.type === 'thinking') for (const t of splitText(b.text)) send({ reasoning_content: t });
    else if (b.type === 'tool') {
      const call = calls.get(b) as ToolCall;
      const index = toolIndex++;
      send({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] });
      for (const part of splitChars(call.function.arguments)) send({ tool_calls: [{ index, function: { arguments: part } }] });
    }
  });
  if (!streamed) return;
  if (decision.kind === 'error') {
    sseFrame(ex.res, null, { error: openaiError(decision.error) });
    ex.res.end();
    return;
  }
  chunk({}, finish_reason);
  if (includeUsage) sseFrame(ex.res, null, { ...head, object: 'chat.completion.chunk', choices: [], usage });
  sseFrame(ex.res, null, '[DONE]');
  ex.res.end();
}

/** GET /v1/models and /models, OpenAI flavour: `{object:'list', data:[{id, object:'model', …}]}`. */
export function openaiModels(ex: Exchange, ids: readonly string[]): void {
  const data = ids.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'fake-model' }));
  sendJson(ex.res, 200, { object: 'list', data });
}
