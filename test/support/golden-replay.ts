// The golden replay, shared by test/agents/golden.test.ts and the per-agent converter tests (each
// fixture is replayed by one of them, see golden.test.ts):
// native lines (with {"$daemon": …} actions interleaved, see test/agents/README.md) through a
// converter, the normalizer and an event log with deterministic ids and clock.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { AgentDriver } from '../../src/agents/types.js';
import { UniversalEvent } from '../../src/schema/events.js';
import type { Normalized } from '../../src/sessions/event-batch.js';
import { EventLog } from '../../src/sessions/event-log.js';
import { Normalizer } from '../../src/sessions/normalize.js';
import { counterIds, steppingClock } from '../../src/util/deps.js';

/** What a replay needs of a driver: a registry entry, or a converter with its capabilities. */
export type Replayable = Pick<AgentDriver, 'id' | 'capabilities' | 'converter'>;

type DaemonAction =
  | { $daemon: 'turn'; message: string; attachments?: { path: string; mime?: string }[] }
  | { $daemon: 'permission_reply'; id: string; reply: 'once' | 'always' | 'reject' }
  | { $daemon: 'question_reply'; id: string; answers: string[][] | null }
  | { $daemon: 'interrupt' }
  | { $daemon: 'exit'; exit_code: number | null; signal?: string | null; stderr?: string; requested?: boolean };

export function replay(driver: Replayable, lines: string[]): UniversalEvent[] {
  const ids = counterIds();
  const log = new EventLog('golden', { maxEvents: 1e6, maxBytes: 1e9 }, ids, steppingClock());
  const normalizer = new Normalizer(driver.capabilities, ids);
  const append = (out: Normalized[]) => out.forEach((n) => log.append(n.event, n.raw, n.nativeSessionId));
  let state = driver.converter.initial();
  append(normalizer.sessionCreated({ agent: driver.id, cwd: '/workspace' }, null));
  for (const line of lines) {
    const parsed = parseLine(line);
    if (isAction(parsed)) {
      append(act(normalizer, parsed));
      continue;
    }
    const { state: next, events } = driver.converter.convert(state, parsed);
    state = next;
    append(normalizer.agent(events, parsed));
  }
  return log.read(0, Infinity, true);
}

function act(n: Normalizer, a: DaemonAction): Normalized[] {
  switch (a.$daemon) {
    case 'turn':
      return n.turnStarted({ message: a.message, attachments: a.attachments ?? [] }, { message: a.message });
    case 'permission_reply':
      return n.permissionReplied(a.id, a.reply, { reply: a.reply });
    case 'question_reply':
      return n.questionReplied(a.id, a.answers, { answers: a.answers });
    case 'interrupt':
      n.interruptRequested();
      return [];
    case 'exit': {
      const lines = a.stderr ? a.stderr.split('\n') : [];
      const stderr = { head: lines.join('\n'), truncated: false, total_lines: lines.length };
      return n.processExited({ exitCode: a.exit_code, signal: a.signal ?? null, stderr, requested: a.requested ?? false });
    }
  }
}

export function parseLine(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return line; // non-JSON native output is part of what fixtures test
  }
}

function isAction(value: unknown): value is DaemonAction {
  return typeof value === 'object' && value !== null && '$daemon' in value;
}


/**
 * Replays <dir>/<name>.jsonl through `driver`, checks every event against the schema and compares
 * them with <dir>/<name>.events.json (UPDATE_GOLDEN=1 rewrites that file: read the diff).
 */
export function expectGolden(driver: Replayable, dir: string, name: string): UniversalEvent[] {
  const events = replayFile(driver, dir, name);
  for (const e of events) expect(UniversalEvent.safeParse(e).success, JSON.stringify(e)).toBe(true);
  const expectedFile = join(dir, `${name}.events.json`);
  if (process.env.UPDATE_GOLDEN) writeFileSync(expectedFile, `${JSON.stringify(events, null, 2)}\n`);
  expect(events).toEqual(JSON.parse(readFileSync(expectedFile, 'utf8')) as UniversalEvent[]);
  return events;
}

/** Replays <dir>/<name>.jsonl through `driver`, without comparing. */
export function replayFile(driver: Replayable, dir: string, name: string): UniversalEvent[] {
  return replay(driver, readFileSync(join(dir, `${name}.jsonl`), 'utf8').split('\n').filter((l) => l.trim() !== ''));
}

/**
 * An agent's golden fixtures for its convert test: <dir>/<case>.jsonl made from the recordings in
 * <dir>/recorded/. `replayCase` replays one; `itReplaysEach(check)`, called inside the test's
 * describe, adds the two tests every such file has: the cases are exactly the recorded scenarios,
 * and each case replays to its .events.json (expectGolden) and then passes `check`.
 */
export function goldenFixtures(driver: Replayable, dir: string) {
  const cases = readdirSync(dir).filter((f) => f.endsWith('.jsonl')).map((f) => f.slice(0, -'.jsonl'.length));
  return {
    cases,
    replayCase: (name: string) => replayFile(driver, dir, name),
    itReplaysEach(check: (name: string, events: UniversalEvent[]) => void): void {
      it('covers every recorded scenario', () => {
        const recorded = readdirSync(join(dir, 'recorded')).filter((f) => f.endsWith('.jsonl')).map((f) => f.slice(0, -6));
        expect([...cases].sort()).toEqual(recorded.sort());
      });
      it.each(cases)('%s', (name) => check(name, expectGolden(driver, dir, name)));
    },
  };
}
