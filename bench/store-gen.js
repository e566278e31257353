// Builds a large event store for the bench's persistence section, fast: one real daemon run writes
// a template session (the mock's `flood 992`: session.started + one turn = 1,000 events, with their
// raw payloads), then its file is copied and filled with clones of that session straight through
// the store's SQLite binding (src/store/sqlite-binding.ts), in big transactions with the journal off
// (the daemon turns WAL back on when it opens the file). Each clone gets its own session id, event
// ids, sequences and feed cursors; everything else is the bytes the daemon itself wrote, so reads
// and replays serve real events.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { sqliteDatabase } from '../dist/store/sqlite-binding.js';
import { api, startDaemon, tempDataDir } from './daemon.js';
import { session, untilIdle } from './util.js';

const STORE = 'agentwire.db';
const Database = sqliteDatabase();

/** A data dir holding one session `tpl` of exactly 1,000 events, written by a real daemon. */
export async function templateStore() {
  const dir = tempDataDir('template');
  const d = await startDaemon(['--data-dir', dir]);
  try {
    await session(d, 'tpl');
    await api(d.url, 'POST', '/v1/sessions/tpl/messages', { message: 'flood 992' });
    await untilIdle(d, 'tpl');
  } finally {
    await d.stop(); // graceful: the store is closed, its WAL checkpointed into the file
  }
  return dir;
}

function readTemplate(dir) {
  const db = new Database(join(dir, STORE), { readonly: true });
  try {
    const row = db.prepare("SELECT * FROM sessions WHERE id = 'tpl'").get();
    const events = db.prepare("SELECT sequence, json, raw FROM events WHERE session_id = 'tpl' ORDER BY sequence").all();
    if (events.length !== 1000) throw new Error(`template session holds ${events.length} events, expected 1000`);
    // {"event_id":"…","sequence":N,"time":"…","session_id":"tpl"<rest>
    const parts = events.map((e) => {
      const m = /^\{"event_id":"[^"]+","sequence":\d+,"time":"([^"]+)","session_id":"tpl"(.*)$/s.exec(e.json);
      if (!m) throw new Error(`unexpected envelope: ${e.json.slice(0, 120)}`);
      return { time: m[1], rest: m[2], raw: e.raw, bytes: Buffer.byteLength(e.json) + (e.raw ? Buffer.byteLength(e.raw) : 0) - 3 };
    });
    return { row, parts };
  } finally {
    db.close();
  }
}

let idCounter = 0;
const eventId = () => `evt_${(idCounter++).toString(36).padStart(16, '0')}`;

/**
 * A copy of the template's file with `sessions` sessions of 1,000 events each (the template's;
 * `running` of them left mid-turn, as a crash leaves them; of the rest, 90 % ended), in `dir`.
 * Returns the number of events written.
 */
export function generateStore(templateDir, dir, { sessions = 1000, running = 10 } = {}) {
  copyFileSync(join(templateDir, STORE), join(dir, STORE));
  const { row, parts } = readTemplate(templateDir);
  const db = open(dir);
  db.exec('DELETE FROM events; DELETE FROM sessions;');
  const insertSession = sessionInserter(db);
  const insertEvent = eventInserter(db);
  const start = Date.now() - sessions * 60_000;
  let written = 0;
  const fill = db.transaction((from, to) => {
    for (let k = from; k < to; k++) {
      const id = `stored-${String(k).padStart(4, '0')}`;
      let bytes = 0;
      for (let i = 0; i < parts.length; i++) {
        const p = parts[i];
        insertEvent.run(id, i + 1, `{"event_id":"${eventId()}","sequence":${i + 1},"time":"${p.time}","session_id":"${id}"${p.rest}`, p.raw);
        bytes += p.bytes + id.length;
      }
      written += parts.length;
      const created = new Date(start + k * 60_000).toISOString();
      const state = k < running ? 'running' : k % 10 === 0 ? 'idle' : 'ended';
      insertSession(row, {
        id,
        status: state,
        snapshot: state === 'running' ? row.snapshot.replace('"turnId":null', '"turnId":"turn_1"') : row.snapshot,
        created_at: created,
        updated_at: created,
        ended_at: state === 'ended' ? new Date(start + k * 60_000 + 30_000).toISOString() : null,
        last_sequence: parts.length,
        event_bytes: bytes,
      });
    }
  });
  for (let k = 0; k < sessions; k += 100) fill(k, Math.min(sessions, k + 100));
  close(db);
  return written;
}

/**
 * Adds one session `id` of `events` events to the store in `dir`: session.started, then the
 * template's turn (999 events) over and over, the last turn cut where the count is reached.
 */
export function addBigSession(templateDir, dir, id, events) {
  const { row, parts } = readTemplate(templateDir);
  const db = open(dir);
  const insertEvent = eventInserter(db);
  let bytes = 0;
  const fill = db.transaction((from, to) => {
    for (let seq = from; seq <= to; seq++) {
      const p = parts[seq === 1 ? 0 : 1 + ((seq - 2) % (parts.length - 1))];
      insertEvent.run(id, seq, `{"event_id":"${eventId()}","sequence":${seq},"time":"${p.time}","session_id":"${id}"${p.rest}`, p.raw);
      bytes += p.bytes + id.length;
    }
  });
  for (let seq = 1; seq <= events; seq += 100_000) fill(seq, Math.min(events, seq + 99_999));
  const now = new Date().toISOString();
  db.transaction(() =>
    sessionInserter(db)(row, { id, status: 'ended', snapshot: row.snapshot, created_at: now, updated_at: now, ended_at: now, last_sequence: events, event_bytes: bytes }),
  )();
  close(db);
}

function open(dir) {
  const db = new Database(join(dir, STORE));
  // A throwaway file being filled: no journal, no syncs, a big cache.
  db.pragma('locking_mode = EXCLUSIVE');
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -131072');
  return db;
}

/**
 * Inserts events with the next feed cursors (docs/feed.md), as the daemon gives them: after the
 * last one the file records, which close() moves on.
 */
function eventInserter(db) {
  const insert = db.prepare('INSERT INTO events (session_id, sequence, cursor, json, raw) VALUES (?, ?, ?, ?, ?)');
  let cursor = db.prepare('SELECT last FROM feed_head').pluck().get();
  db.cursorAdvanced = () => cursor;
  return { run: (id, sequence, json, raw) => insert.run(id, sequence, ++cursor, json, raw) };
}

function close(db) {
  if (db.cursorAdvanced) db.prepare('UPDATE feed_head SET last = ?').run(db.cursorAdvanced());
  db.pragma('journal_mode = WAL'); // as the daemon keeps it
  db.close();
}

function sessionInserter(db) {
  const columns = db.pragma('table_info(sessions)').map((c) => c.name);
  const insert = db.prepare(`INSERT INTO sessions (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
  return (template, values) => insert.run(columns.map((c) => (c in values ? values[c] : template[c])));
}
