// OpenAI Responses API: POST /v1/responses (SSE when `stream: true`, JSON otherwise), as Codex
// speaks it. Every streamed event carries `type` and `sequence_number`, and is framed with an
// `event:` line naming the same type; there is no `[DONE]` sentinel.
import { decide, play, type Exchange } from './exchange.js';
import { countModelTurns, type ErrorStep } from './scenario.js';
import { responsesTools, type Block } from './tools.js';
import { asList, asObj, nowSeconds, retryHeaders, sendJson, sleep, splitChars, splitText, sseFrame, startSse, tokens } from './wire.js';

const OPENAI_ERRORS: Record<number, [type: string, code: string | null, message: string]> = {
  400: ['invalid_request_error', null, 'Invalid request'],
  401: ['invalid_request_error', 'invalid_api_key', 'Incorrect API key provided'],
  404: ['invalid_request_error', 'model_not_found', 'The model does not exist'],
  429: ['requests', 'rate_limit_exceeded', 'Rate limit reached for requests'],
  500: ['server_error', null, 'The server had an error while processing your request. Sorry about that!'],
  503: ['server_error', null, 'The engine is currently overloaded, please try again later.'],
};

/** OpenAI's error object `{message, type, param, code}` for an error step. */
export function openaiError(e: ErrorStep): { message: string; type: string; param: null; code: string | null } {
  const [type, code, message] = OPENAI_ERRORS[e.error] ?? ['server_error', null, `fake model error ${e.error}`];
  let text = e.message ?? message;
  const errorCode = e.code ?? code;
  // Codex reads the delay of a rate-limit failure from this sentence.
  if (e.message === undefined && e.retryAfterMs !== undefined && errorCode === 'rate_limit_exceeded') {
    text += `. Please try again in ${e.retryAfterMs}ms.`;
  }
  return { message: text, type: e.type ?? type, param: null, code: errorCode };
}

/** HTTP error answer shared by both OpenAI APIs: the JSON body plus retry headers. */
export function sendOpenaiError(ex: Exchange, e: ErrorStep, requestId: string): void {
  sendJson(ex.res, e.error, { error: openaiError(e) }, { 'x-request-id': requestId, ...retryHeaders(e.retryAfterMs) });
}

/** Items the model produced; a run of them in `input` is one earlier model turn. */
const MODEL_ITEMS = new Set([
  'function_call',
  'custom_tool_call',
  'reasoning',
  'local_shell_call',
  'web_search_call',
  'file_search_call',
  'computer_call',
  'code_interpreter_call',
  'image_generation_call',
  'mcp_call',
  'tool_search_call',
]);

export function responsesTurnIndex(body: Record<string, unknown>, prior: Map<string, number>): number {
  const input = asList(body.input).map(asObj);
  const prev = typeof body.previous_response_id === 'string' ? (prior.get(body.previous_response_id) ?? 0) : 0;
  return (
    prev +
    countModelTurns(
      input,
      (item) => {
        const type = typeof item.type === 'string' ? item.type : typeof item.role === 'string' ? 'message' : '';
        if (type === 'message') return item.role === 'assistant' ? 'model' : 'other';
        if (type.endsWith('_output')) return 'other';
        return MODEL_ITEMS.has(type) ? 'model' : 'skip';
      },
      false,
    )
  );
}

type Item = Record<string, unknown> & { id: string; type: string };

export async function handleResponses(ex: Exchange): Promise<void> {
  const body = ex.body;
  const turn = responsesTurnIndex(body, ex.responseTurns);
  const decision = decide(ex, responsesTools(body), turn);
  const requestId = ex.ids.requestId();
  if (decision.kind === 'error' && !(decision.error.inStream && body.stream === true)) {
    return sendOpenaiError(ex, decision.error, requestId);
  }
  const blocks = decision.kind === 'error' ? decision.before : decision.blocks;
  const encrypted = asList(body.include).includes('reasoning.encrypted_content');
  const items = blocks.flatMap((b) => outputItem(ex, b, encrypted));
  const response = responseObject(ex, items);
  ex.responseTurns.set(response.id, turn + 1);

  if (body.stream !== true) {
    for (const b of blocks) if (b.type === 'sleep') await sleep(b.ms);
    return sendJson(ex.res, 200, response, { 'x-request-id': requestId });
  }

  startSse(ex.res, { 'x-request-id': requestId });
  let seq = 0;
  const emit = (type: string, fields: Record<string, unknown>) =>
    sseFrame(ex.res, type, { type, sequence_number: seq++, ...fields });
  const inProgress = { ...response, status: 'in_progress', output: [], usage: null };
  emit('response.created', { response: inProgress });
  emit('response.in_progress', { response: inProgress });
  const streamed = await play(ex, blocks, (_b, output_index) => {
    const item = items[output_index];
    if (item) streamItem(emit, output_index, item);
  });
  if (!streamed) return;
  if (decision.kind === 'error') {
    const err = openaiError(decision.error);
    const code = decision.error.code ?? (decision.error.error === 429 ? 'rate_limit_exceeded' : 'server_error');
    emit('response.failed', {
      response: { ...response, status: 'failed', error: { code, message: err.message }, usage: null },
    });
  } else {
    emit('response.completed', { response });
  }
  ex.res.end();
}

function responseObject(ex: Exchange, output: Item[]) {
  const body = ex.body;
  const reasoning = output.filter((i) => i.type === 'reasoning');
  const visible = output.filter((i) => i.type !== 'reasoning');
  const input_tokens = tokens(JSON.stringify([body.instructions ?? null, body.input ?? null, body.tools ?? []]));
  const reasoning_tokens = reasoning.length ? tokens(JSON.stringify(reasoning.map((i) => i.summary))) : 0;
  const output_tokens = tokens(JSON.stringify(visible)) + reasoning_tokens;
  return {
    id: ex.ids.openaiItem('resp'),
    object: 'response',
    created_at: nowSeconds(),
    status: 'completed',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: typeof body.model === 'string' ? body.model : 'gpt-fake',
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: body.reasoning ?? { effort: null, summary: null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: {
      input_tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens,
      output_tokens_details: { reasoning_tokens },
      total_tokens: input_tokens + output_tokens,
    },
    user: null,
    metadata: body.metadata ?? {},
  };
}

/** The completed output item of one block (sleep has none). */
function outputItem(ex: Exchange, b: Block, encrypted: boolean): Item[] {
  switch (b.type) {
    case 'text': {
      const part = { type: 'output_text', annotations: [], logprobs: [], text: b.text };
      return [{ id: ex.ids.openaiItem('msg'), type: 'message', status: 'completed', content: [part], role: 'assistant' }];
    }
    case 'thinking': {
      const item: Item = { id: ex.ids.openaiItem('rs'), type: 'reasoning', summary: [{ type: 'summary_text', text: b.text }] };
      if (encrypted) item.encrypted_content = ex.ids.opaque(96);
      return [item];
    }
    case 'tool':
      if (b.toolSearch) return [{ id: ex.ids.openaiItem('fc'), type: 'tool_search_call', status: 'completed', call_id: ex.ids.call(), execution: 'client', arguments: b.args }];
      return [
        {
          id: ex.ids.openaiItem('fc'),
          type: 'function_call',
          status: 'completed',
          arguments: JSON.stringify(b.args),
          call_id: ex.ids.call(),
          name: b.name,
          ...(b.namespace ? { namespace: b.namespace } : {}),
        },
      ];
    case 'custom':
      return [
        { id: ex.ids.openaiItem('ctc'), type: 'custom_tool_call', status: 'completed', call_id: ex.ids.call(), name: b.name, input: b.input },
      ];
    case 'sleep':
      return [];
  }
}

type Emit = (type: string, fields: Record<string, unknown>) => void;

function streamItem(emit: Emit, output_index: number, item: Item): void {
  const item_id = item.id;
  if (item.type === 'message') {
    const part = (item.content as Record<string, unknown>[])[0] ?? {};
    const text = String(part.text ?? '');
    const at = { item_id, output_index, content_index: 0 };
    emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
    emit('response.content_part.added', { ...at, part: { ...part, text: '' } });
    for (const delta of splitText(text)) emit('response.output_text.delta', { ...at, delta, logprobs: [] });
    emit('response.output_text.done', { ...at, text, logprobs: [] });
    emit('response.content_part.done', { ...at, part });
  } else if (item.type === 'reasoning') {
    const summary = (item.summary as { text: string }[])[0];
    const text = summary?.text ?? '';
    const at = { item_id, output_index, summary_index: 0 };
    const added: Item = { id: item.id, type: 'reasoning', summary: [] };
    if ('encrypted_content' in item) added.encrypted_content = item.encrypted_content;
    emit('response.output_item.added', { output_index, item: added });
    emit('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
    for (const delta of splitText(text)) emit('response.reasoning_summary_text.delta', { ...at, delta });
    emit('response.reasoning_summary_text.done', { ...at, text });
    emit('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } });
  } else if (item.type === 'function_call') {
    const args = String(item.arguments);
    emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
    for (const delta of splitChars(args)) emit('response.function_call_arguments.delta', { item_id, output_index, delta });
    emit('response.function_call_arguments.done', { item_id, output_index, name: item.name, arguments: args });
  } else if (item.type === 'tool_search_call') {
    emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress' } });
  } else if (item.type === 'custom_tool_call') {
    const input = String(item.input);
    emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', input: '' } });
    for (const delta of splitChars(input)) emit('response.custom_tool_call_input.delta', { item_id, output_index, delta });
    emit('response.custom_tool_call_input.done', { item_id, output_index, input });
  }
  emit('response.output_item.done', { output_index, item });
}
