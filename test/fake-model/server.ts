// The fake model server: one node:http server on 127.0.0.1 speaking the Anthropic Messages API,
// the OpenAI Responses API, OpenAI Chat Completions and the Gemini API, answering from scenarios, and logging every
// request so a test can assert what a CLI sent and that it talked only to us.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicError, anthropicModels, handleCountTokens, handleMessages } from './anthropic.js';
import type { Exchange, RequestLogEntry } from './exchange.js';
import { GEMINI_ROUTE, handleGemini } from './gemini.js';
import { handleChat, openaiModels } from './openai-chat.js';
import { handleResponses } from './openai-responses.js';
import { ScenarioBook, type ScenarioOptions } from './scenario.js';
import { asObj, Ids, readBody, sendJson } from './wire.js';

export type { RequestLogEntry } from './exchange.js';
export { loadScenario, SCENARIO_HEADER, type Scenario, type Step, type Turn } from './scenario.js';

export interface FakeModelOptions extends ScenarioOptions {
  /** Print a line per request (true: to stderr), or hand each line to a function. */
  log?: boolean | ((line: string) => void);
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number;
  /** Seed of the id generator; the same seed gives the same ids in the same order. */
  seed?: number;
  /** Model ids listed by GET /v1/models (OpenAI flavour). */
  models?: string[];
}

export interface FakeModel {
  /** `http://127.0.0.1:<port>`, without `/v1` (Claude Code wants it so; add `/v1` for OpenAI clients). */
  url: string;
  port: number;
  /** Every request received, in arrival order. */
  requests: RequestLogEntry[];
  close(): Promise<void>;
}

const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'x-goog-api-key', 'api-key', 'cookie']);
const DEFAULT_MODELS = ['gpt-5.5', 'gpt-5', 'fake-model'];

function redact(headers: IncomingMessage['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    if (!SECRET_HEADERS.has(k)) out[k] = v;
    else out[k] = /^bearer\s/i.test(String(v)) ? 'Bearer [redacted]' : '[redacted]';
  }
  return out;
}

/** Anthropic clients identify themselves with these headers; OpenAI clients do not send them. */
const isAnthropic = (req: IncomingMessage) => 'anthropic-version' in req.headers || 'x-api-key' in req.headers;

export async function startFakeModel(opts: FakeModelOptions = {}): Promise<FakeModel> {
  const book = new ScenarioBook(opts);
  const ids = new Ids(opts.seed);
  const requests: RequestLogEntry[] = [];
  const responseTurns = new Map<string, number>();
  const models = opts.models ?? DEFAULT_MODELS;
  const print =
    opts.log === true
      ? (line: string) => process.stderr.write(`[fake-model] ${line}\n`)
      : typeof opts.log === 'function'
        ? opts.log
        : undefined;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const entry: RequestLogEntry = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.search,
      headers: redact(req.headers),
      body: null,
      at: Date.now(),
    };
    requests.push(entry);
    res.on('finish', () => {
      entry.status = res.statusCode;
      const turn = entry.toolless ? ' toolless' : entry.turn !== undefined ? ` ${entry.scenario}#${entry.turn}` : '';
      print?.(`${entry.method} ${entry.path}${entry.query} -> ${res.statusCode}${turn}`);
    });

    let bodyText = '';
    try {
      bodyText = (await readBody(req)).toString('utf8');
    } catch (err) {
      return sendJson(res, 415, { error: { message: String(err), type: 'invalid_request_error', param: null, code: null } });
    }
    let parsed: unknown = null;
    if (bodyText) {
      try {
        parsed = JSON.parse(bodyText);
      } catch {
        parsed = bodyText;
      }
    }
    entry.body = parsed;
    const ex: Exchange = { req, res, url, body: asObj(parsed), bodyText, ids, book, entry, responseTurns };
    // Accept paths with or without the `/v1` prefix, whichever base URL a client was given.
    const path = url.pathname.replace(/\/+$/, '').replace(/^\/v1(?=\/)/, '') || '/';
    const post = req.method === 'POST';
    const get = req.method === 'GET' || req.method === 'HEAD';

    if (post && (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))) return badRequest(ex, 'request body must be a JSON object');
    if (post && path === '/messages') return handleMessages(ex);
    if (post && path === '/messages/count_tokens') return handleCountTokens(ex);
    if (post && path === '/responses') return handleResponses(ex);
    if (post && path === '/chat/completions') return handleChat(ex);
    const gemini = post ? GEMINI_ROUTE.exec(url.pathname) : null;
    if (gemini) return handleGemini(ex, decodeURIComponent(gemini[1]!), gemini[2]!);
    if (get && path === '/models') return isAnthropic(req) ? anthropicModels(ex) : openaiModels(ex, models);
    if (get && path === '/') return sendJson(res, 200, { ok: true, fake_model: true });
    return notFound(ex);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      print?.(`handler failed: ${err instanceof Error ? err.stack : String(err)}`);
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(err), type: 'server_error', param: null, code: null } });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function badRequest(ex: Exchange, message: string): void {
  if (isAnthropic(ex.req)) return sendJson(ex.res, 400, anthropicError(400, ex.ids.anthropic('req'), undefined, message));
  sendJson(ex.res, 400, { error: { message, type: 'invalid_request_error', param: null, code: null } });
}

function notFound(ex: Exchange): void {
  const message = `fake model: no route for ${ex.req.method} ${ex.url.pathname}`;
  if (isAnthropic(ex.req)) return sendJson(ex.res, 404, anthropicError(404, ex.ids.anthropic('req'), undefined, message));
  sendJson(ex.res, 404, { error: { message, type: 'invalid_request_error', param: null, code: 'unknown_url' } });
}
