// What the SQLite store's writes hold between two commits (write-batcher.ts stages them, batch-sql.ts
// writes them): a tick's events as parallel columns, so a flood costs a few array pushes per event
// and no object each, the creates, the sessions whose progress changed and the feed's deletion
// entries. After the commit the same staging is read once more, as the feed's entries in cursor order.
import type { FeedRecord, SessionProgress, SessionRecord } from './event-store.js';

/** A create with its JSON columns serialised when staged. */
export interface StagedCreate {
  record: SessionRecord;
  request: string;
  snapshot: string;
}

/** A session's row as the commit writes it. */
export interface ProgressRow {
  id: string;
  progress: SessionProgress;
  snapshot: string;
}

/** A deletion entry staged for the feed; `keep` also marks the session's row deleted. */
export interface StagedMark {
  cursor: number;
  sessionId: string;
  agent: string;
  json: string;
  at: string;
  keep: boolean;
}

export interface Staged {
  sessions: string[];
  sequences: number[];
  cursors: number[];
  marks: StagedMark[];
  jsons: string[];
  raws: (string | null)[];
  bytes: Map<string, number>;
  progress: Map<string, () => SessionProgress>;
  creates: StagedCreate[];
  /** Last staged sequence per session, reported once committed. */
  last: Map<string, number>;
}

export function emptyStaged(): Staged {
  return { sessions: [], sequences: [], cursors: [], marks: [], jsons: [], raws: [], bytes: new Map(), progress: new Map(), creates: [], last: new Map() };
}

/** Nothing staged: a flush has nothing to commit. */
export function isEmpty(s: Staged): boolean {
  return s.sequences.length === 0 && s.progress.size === 0 && s.creates.length === 0 && s.marks.length === 0;
}

/** The last feed cursor a staging holds (0 for none): events and deletion marks were given cursors in one sequence. */
export function lastCursor(s: Staged): number {
  return Math.max(s.cursors[s.sequences.length - 1] ?? 0, s.marks.at(-1)?.cursor ?? 0);
}

/** The committed entries in cursor order, events and deletion marks merged; `agentOf` names a session's agent. */
export function feedRecords(s: Staged, agentOf: (sessionId: string) => string): FeedRecord[] {
  const n = s.sequences.length;
  const records: FeedRecord[] = new Array(n + s.marks.length);
  let agentFor = '';
  let agent = '';
  for (let i = 0, m = 0, r = 0; r < records.length; r++) {
    const mark = s.marks[m];
    if (mark && (i >= n || mark.cursor < s.cursors[i]!)) {
      records[r] = { cursor: mark.cursor, sessionId: mark.sessionId, agent: mark.agent, json: mark.json, raw: null, deleted: true };
      m++;
      continue;
    }
    const sessionId = s.sessions[i]!;
    if (sessionId !== agentFor) agent = agentOf((agentFor = sessionId));
    records[r] = { cursor: s.cursors[i]!, sessionId, agent, json: s.jsons[i]!, raw: s.raws[i]!, deleted: false };
    i++;
  }
  return records;
}
