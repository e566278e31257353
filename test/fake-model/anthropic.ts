// Anthropic Messages API: POST /v1/messages (SSE when `stream: true`, JSON otherwise),
// POST /v1/messages/count_tokens, and the Anthropic flavour of GET /v1/models. The wire format is
// the real one, event for event, since the real Claude Code CLI parses it.
import { decide, play, type Exchange } from './exchange.js';
import { countModelTurns, type ErrorStep } from './scenario.js';
import { anthropicTools, type Block } from './tools.js';
import { asList, asObj, retryHeaders, sendJson, sleep, splitChars, splitText, sseFrame, startSse, tokens } from './wire.js';

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};
const ERROR_MESSAGES: Record<number, string> = {
  429: 'Number of request tokens has exceeded your per-minute rate limit',
  500: 'Internal server error',
  529: 'Overloaded',
};

/** Anthropic's error body: `{type:'error', error:{type, message}, request_id}`. */
export function anthropicError(status: number, requestId: string, type?: string, message?: string) {
  return {
    type: 'error',
    error: {
      type: type ?? ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'),
      message: message ?? ERROR_MESSAGES[status] ?? `fake model error ${status}`,
    },
    request_id: requestId,
  };
}

/** Model turns already in the history: runs of assistant messages (a trailing one is a prefill). */
export function anthropicTurnIndex(body: Record<string, unknown>): number {
  const messages = asList(body.messages).map(asObj);
  return countModelTurns(messages, (m) => (m.role === 'assistant' ? 'model' : m.role === 'user' ? 'other' : 'skip'), true);
}

function inputTokens(body: Record<string, unknown>): number {
  return tokens(JSON.stringify([body.system ?? null, body.messages ?? [], body.tools ?? []]));
}

function outputTokens(blocks: Block[]): number {
  return tokens(blocks.map((b) => ('text' in b ? b.text : 'args' in b ? JSON.stringify(b.args) : '')).join(''));
}

export async function handleMessages(ex: Exchange): Promise<void> {
  const body = ex.body;
  const decision = decide(ex, anthropicTools(body), anthropicTurnIndex(body));
  const requestId = ex.ids.anthropic('req');
  if (decision.kind === 'error' && !(decision.error.inStream && body.stream === true)) {
    return sendError(ex, decision.error, requestId);
  }
  const blocks = decision.kind === 'error' ? decision.before : decision.blocks;
  const message = {
    id: ex.ids.anthropic('msg'),
    type: 'message',
    role: 'assistant',
    model: typeof body.model === 'string' ? body.model : 'claude-fake',
    content: [] as unknown[],
    stop_reason: null as string | null,
    stop_sequence: null,
    usage: {
      input_tokens: inputTokens(body),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 1,
      service_tier: 'standard',
    },
  };
  const content = blocks.flatMap((b) => contentBlock(ex, b));
  const stopReason = content.some((c) => c.type === 'tool_use') ? 'tool_use' : 'end_turn';

  if (body.stream !== true) {
    for (const b of blocks) if (b.type === 'sleep') await sleep(b.ms);
    const usage = { ...message.usage, output_tokens: outputTokens(blocks) };
    return sendJson(ex.res, 200, { ...message, content, stop_reason: stopReason, usage }, { 'request-id': requestId });
  }

  startSse(ex.res, { 'request-id': requestId });
  sseFrame(ex.res, 'message_start', { type: 'message_start', message });
  sseFrame(ex.res, 'ping', { type: 'ping' });
  const streamed = await play(ex, blocks, (_b, index) => {
    const block = content[index];
    if (block) streamBlock(ex, index, block);
  });
  if (!streamed) return;
  if (decision.kind === 'error') {
    const err = anthropicError(decision.error.error, requestId, decision.error.type, decision.error.message);
    sseFrame(ex.res, 'error', { type: 'error', error: err.error });
    ex.res.end();
    return;
  }
  sseFrame(ex.res, 'message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: outputTokens(blocks) },
  });
  sseFrame(ex.res, 'message_stop', { type: 'message_stop' });
  ex.res.end();
}

type ContentBlock = Record<string, unknown> & { type: string };

/** The finished content block of one fake block (sleep has none). */
function contentBlock(ex: Exchange, b: Block): ContentBlock[] {
  switch (b.type) {
    case 'text':
      return [{ type: 'text', text: b.text }];
    case 'thinking':
      return [{ type: 'thinking', thinking: b.text, signature: ex.ids.opaque() }];
    case 'tool':
      return [{ type: 'tool_use', id: ex.ids.anthropic('toolu'), name: b.name, input: b.args }];
    case 'custom':
      // Anthropic has no freeform tools; tools.ts never maps onto one for this protocol.
      return [{ type: 'text', text: b.input }];
    case 'sleep':
      return [];
  }
}

function streamBlock(ex: Exchange, index: number, block: ContentBlock): void {
  const delta = (d: Record<string, unknown>) =>
    sseFrame(ex.res, 'content_block_delta', { type: 'content_block_delta', index, delta: d });
  if (block.type === 'text') {
    sseFrame(ex.res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    for (const t of splitText(block.text as string)) delta({ type: 'text_delta', text: t });
  } else if (block.type === 'thinking') {
    sseFrame(ex.res, 'content_block_start', {
      type: 'content_block_start',
      index,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    });
    for (const t of splitText(block.thinking as string)) delta({ type: 'thinking_delta', thinking: t });
    delta({ type: 'signature_delta', signature: block.signature });
  } else {
    sseFrame(ex.res, 'content_block_start', {
      type: 'content_block_start',
      index,
      content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
    });
    delta({ type: 'input_json_delta', partial_json: '' });
    for (const part of splitChars(JSON.stringify(block.input))) delta({ type: 'input_json_delta', partial_json: part });
  }
  sseFrame(ex.res, 'content_block_stop', { type: 'content_block_stop', index });
}

function sendError(ex: Exchange, e: ErrorStep, requestId: string): void {
  const headers: Record<string, string> = { 'request-id': requestId, ...retryHeaders(e.retryAfterMs) };
  if (e.shouldRetry !== undefined) headers['x-should-retry'] = String(e.shouldRetry);
  sendJson(ex.res, e.error, anthropicError(e.error, requestId, e.type, e.message), headers);
}

/** POST /v1/messages/count_tokens: `{input_tokens}`. */
export function handleCountTokens(ex: Exchange): void {
  sendJson(ex.res, 200, { input_tokens: inputTokens(ex.body) });
}

/** GET /v1/models, Anthropic flavour (asked with an `anthropic-version` or `x-api-key` header). */
export function anthropicModels(ex: Exchange): void {
  const models = [
    ['claude-sonnet-4-5-20250929', 'Claude Sonnet 4.5'],
    ['claude-opus-4-1-20250805', 'Claude Opus 4.1'],
    ['claude-haiku-4-5-20251001', 'Claude Haiku 4.5'],
  ].map(([id, display_name]) => ({ type: 'model', id, display_name, created_at: '2025-01-01T00:00:00Z' }));
  sendJson(ex.res, 200, { data: models, has_more: false, first_id: models[0]?.id, last_id: models.at(-1)?.id });
}
