// A real daemon process for the client tests (one install per test file, see ../daemon-process.ts)
// and a client pointed at it; plus the checks every test that runs agents makes.
import { expect } from 'vitest';
import { createClient, type AgentwireClient, type ClientOptions, type UniversalEvent } from '../../client/src/index.js';
import { startDaemon, type DaemonProcess } from '../support/daemon-process.js';
import { checkingFetch } from '../support/openapi-check.js';

export interface ClientDaemon {
  daemon: DaemonProcess;
  port: number;
  baseUrl: string;
  /** The token the daemon made (undefined when the test gave one or --no-token). */
  token: string | undefined;
  client: AgentwireClient;
}

/**
 * A daemon with `args` (memory store unless the test asks otherwise) and a client for it. The
 * client carries the token the daemon made for itself (the default); a token the test gave with
 * `--token` it must pass itself, so tests of a missing token keep a client without one. Its
 * `fetch` checks every exchange against openapi.json (../support/openapi-check.ts), around the
 * test's own `fetch` if it gives one.
 */
export async function startClientDaemon(args: string[] = [], client: Partial<ClientOptions> = {}): Promise<ClientDaemon> {
  const { daemon, port, token } = await startDaemon(args.includes('--persist') ? args : ['--persist', 'off', ...args]);
  const baseUrl = `http://127.0.0.1:${port}`;
  const made = token !== undefined && !args.includes('--token');
  return { daemon, port, baseUrl, token: made ? token : undefined, client: createClient({ baseUrl, ...(made ? { token } : {}), ...client, fetch: checkingFetch(client.fetch) }) };
}

export function expectNoUnparsed(events: UniversalEvent[]): void {
  expect(events.filter((e) => e.type === 'agent.unparsed')).toEqual([]);
}

/** Sequences 1..n exactly, in order: no gap, no duplicate. */
export function expectDense(events: UniversalEvent[], from = 1): void {
  const sequences = events.map((e) => e.sequence);
  const expected = Array.from({ length: sequences.length }, (_, i) => from + i);
  expect(sequences.length).toBeGreaterThan(0);
  // Compared as a summary first: a 100 000-element diff is unreadable.
  const firstWrong = sequences.findIndex((s, i) => s !== expected[i]);
  expect(firstWrong, `first wrong index ${firstWrong}: got ${sequences[firstWrong]}, expected ${expected[firstWrong]}`).toBe(-1);
}

/** Collects an iterator until it ends (or `stop` says so after an event). */
export async function collect<T>(iterable: AsyncIterable<T>, stop?: (item: T) => boolean): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) {
    out.push(item);
    if (stop?.(item)) break;
  }
  return out;
}
