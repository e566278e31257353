// The Gemini API (generativelanguage, v1beta) as Gemini CLI's bundled @google/genai calls it:
// POST /v1beta/models/{model}:streamGenerateContent?alt=sse (data-only SSE frames, each a whole
// GenerateContentResponse), :generateContent (one JSON response) and :countTokens. Thought parts
// are `{text, thought: true}`, tool calls whole `functionCall` parts (never streamed in pieces),
// errors Google's `{error: {code, message, status, details}}` with a RetryInfo detail when the
// step asks for a retry delay.
import { decide, play, type Exchange } from './exchange.js';
import { countModelTurns, type ErrorStep } from './scenario.js';
import { geminiTools, type Block } from './tools.js';
import { asList, asObj, retryHeaders, sendJson, sleep, splitText, sseFrame, startSse, tokens } from './wire.js';

/** `/v1beta/models/gemini-2.5-pro:streamGenerateContent` → model and method (any API version). */
export const GEMINI_ROUTE = /^\/(?:v1beta|v1alpha|v1)\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/;

/** google.rpc status names by HTTP status, as the API puts them in `error.status`. */
const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Model turns already in `contents`: runs of `role: 'model'` entries (function responses are user turns). */
export function geminiTurnIndex(body: Record<string, unknown>): number {
  const contents = asList(body.contents).map(asObj);
  return countModelTurns(contents, (c) => (c.role === 'model' ? 'model' : 'other'), false);
}

export function geminiError(e: ErrorStep): { code: number; message: string; status: string; details: unknown[] } {
  const message = e.message ?? (e.error === 429 ? 'Resource has been exhausted (e.g. check quota).' : `fake model error ${e.error}`);
  const details: unknown[] = [];
  // Gemini CLI waits RetryInfo.retryDelay (a Duration string) before retrying a 429/503.
  if (e.retryAfterMs !== undefined) {
    details.push({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${Math.ceil(e.retryAfterMs / 1000)}s` });
  }
  return { code: e.error, message, status: e.type ?? STATUS[e.error] ?? 'UNKNOWN', details };
}

function sendGeminiError(ex: Exchange, e: ErrorStep): void {
  sendJson(ex.res, e.error, { error: geminiError(e) }, retryHeaders(e.retryAfterMs));
}

type Part = Record<string, unknown>;

export async function handleGemini(ex: Exchange, model: string, method: string): Promise<void> {
  const body = ex.body;
  if (method === 'countTokens') {
    const counted = asObj(body.generateContentRequest).contents ?? body.contents;
    return sendJson(ex.res, 200, { totalTokens: tokens(JSON.stringify(counted ?? [])) });
  }
  const streaming = method === 'streamGenerateContent';
  const decision = decide(ex, geminiTools(body), geminiTurnIndex(body));
  if (decision.kind === 'error' && !(decision.error.inStream && streaming)) return sendGeminiError(ex, decision.error);
  const blocks = decision.kind === 'error' ? decision.before : decision.blocks;

  const visible = blocks.filter((b) => b.type !== 'sleep');
  const text = visible.map((b) => (b.type === 'text' ? b.text : '')).join('');
  const thoughts = visible.map((b) => (b.type === 'thinking' ? b.text : '')).join('');
  const calls = visible.filter((b) => b.type === 'tool');
  const promptTokenCount = tokens(JSON.stringify([body.contents ?? [], body.tools ?? [], body.systemInstruction ?? '']));
  const candidatesTokenCount = tokens(text + JSON.stringify(calls));
  const thoughtsTokenCount = thoughts ? tokens(thoughts) : 0;
  const usageMetadata = {
    promptTokenCount,
    candidatesTokenCount,
    totalTokenCount: promptTokenCount + candidatesTokenCount + thoughtsTokenCount,
    ...(thoughtsTokenCount ? { thoughtsTokenCount } : {}),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokenCount }],
  };
  const head = { modelVersion: model, responseId: ex.ids.gemini() };
  // The first function call carries a thought signature, as Gemini 2.5+/3 models send one.
  let signed = false;
  const partsOf = (b: Block): Part[] => {
    if (b.type === 'text') return splitText(b.text).map((t) => ({ text: t }));
    if (b.type === 'thinking') return splitText(b.text).map((t) => ({ text: t, thought: true }));
    if (b.type === 'tool') {
      const part: Part = { functionCall: { name: b.name, args: b.args } };
      if (!signed) part.thoughtSignature = ex.ids.opaque(32);
      signed = true;
      return [part];
    }
    return [];
  };
  const candidate = (parts: Part[], finish?: string) => ({
    content: { parts, role: 'model' },
    ...(finish ? { finishReason: finish } : {}),
    index: 0,
  });

  if (!streaming) {
    for (const b of blocks) if (b.type === 'sleep') await sleep(b.ms);
    const parts = mergeText(visible.flatMap(partsOf));
    return sendJson(ex.res, 200, { candidates: [candidate(parts, 'STOP')], usageMetadata, ...head });
  }

  startSse(ex.res);
  // Every part but the last goes out in its own chunk; the last one carries finishReason and the
  // full usage, as the real API ends a stream. Parts are held back by one so the last is known.
  let pending: Part | undefined;
  const flush = (finish?: string) => {
    if (!pending) return;
    const usage = finish ? usageMetadata : { promptTokenCount, totalTokenCount: promptTokenCount };
    sseFrame(ex.res, null, { candidates: [candidate([pending], finish)], usageMetadata: usage, ...head });
    pending = undefined;
  };
  const streamed = await play(ex, blocks, (b) => {
    for (const part of partsOf(b)) {
      flush();
      pending = part;
    }
  });
  if (!streamed) return;
  if (decision.kind === 'error') {
    flush();
    sseFrame(ex.res, null, { error: geminiError(decision.error) });
    ex.res.end();
    return;
  }
  pending ??= { text: '' };
  flush('STOP');
  ex.res.end();
}

/** Adjacent text parts of the same kind (thought or not) become one, as a non-streamed answer has them. */
function mergeText(parts: Part[]): Part[] {
  const out: Part[] = [];
  for (const p of parts) {
    const last = out.at(-1);
    if (last && typeof last.text === 'string' && typeof p.text === 'string' && !!last.thought === !!p.thought) last.text += p.text;
    else out.push({ ...p });
  }
  return out;
}
