// One request/response pair as the protocol handlers see it, the request log entry it fills, and
// the decision every protocol shares: tool-less request -> fixed text; otherwise the scenario turn
// at the index the protocol read from the history, mapped onto the offered tools.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorStep, ScenarioBook } from './scenario.js';
import { offersNoTools, toBlocks, type Block, type OfferedTool } from './tools.js';
import { sleep, type Ids } from './wire.js';

export interface RequestLogEntry {
  method: string;
  /** Path without the query string (`/v1/messages`, even when Claude Code adds `?beta=true`). */
  path: string;
  /** The query string, `''` or starting with `?`. */
  query: string;
  /** Request headers; `authorization`, `x-api-key`, `api-key`, `cookie` redacted. */
  headers: Record<string, string | string[]>;
  /** The parsed JSON body, the raw text when it is not JSON, `null` when empty. */
  body: unknown;
  /** Epoch milliseconds when the request arrived. */
  at: number;
  /** Filled when answered: HTTP status, and for model calls which scenario turn was served. */
  status?: number;
  scenario?: string;
  turn?: number;
  /** True when the request offered no tools and got the fixed tool-less text. */
  toolless?: boolean;
  /** True when the turn was past the scenario's end and got the "done" text. */
  exhausted?: boolean;
}

export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  body: Record<string, unknown>;
  bodyText: string;
  ids: Ids;
  book: ScenarioBook;
  entry: RequestLogEntry;
  /** Responses API: model turns up to and including each response id (`previous_response_id`). */
  responseTurns: Map<string, number>;
}

export type Decision =
  | { kind: 'blocks'; blocks: Block[] }
  | { kind: 'error'; error: ErrorStep; before: Block[] };

export function decide(ex: Exchange, tools: OfferedTool[], turn: number): Decision {
  if (offersNoTools(tools, ex.body)) {
    ex.entry.toolless = true;
    return { kind: 'blocks', blocks: [{ type: 'text', text: ex.book.toollessText }] };
  }
  const plan = ex.book.plan(ex.book.select(ex.req.headers, ex.bodyText), turn);
  ex.entry.scenario = plan.scenario;
  ex.entry.turn = plan.turn;
  if (plan.kind === 'error') return { kind: 'error', error: plan.error, before: toBlocks(plan.before, tools) };
  if (plan.exhausted) ex.entry.exhausted = true;
  return { kind: 'blocks', blocks: toBlocks(plan.steps, tools) };
}

/** True once the client went away (an interrupted turn): stop writing. */
export const gone = (ex: Exchange) => ex.res.destroyed || ex.res.writableEnded;

/**
 * Plays a turn's blocks in order: pauses at sleep blocks and hands every other block to `each`
 * with its index among them. False when the client went away, and then nothing more is written.
 */
export async function play<B extends Block>(ex: Exchange, blocks: B[], each: (block: B, index: number) => void): Promise<boolean> {
  let index = 0;
  for (const b of blocks) {
    if (gone(ex)) return false;
    if (b.type === 'sleep') await sleep(b.ms);
    else each(b, index++);
  }
  return !gone(ex);
}
