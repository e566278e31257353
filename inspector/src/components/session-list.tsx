// The daemon's sessions, newest first (its own order), with their live status. Listed once when the
// page opens, then kept up to date by the daemon-wide feed (GET /v1/events/sse, only the entries
// that start, end, delete a session or change its status): sessions appear, change status and
// disappear as they do on the daemon, whoever acted, and the request log shows what the user did,
// not a poll. The feed is followed from its last cursor taken before the list, so nothing that
// happens in between is missed (an entry applied twice changes nothing).
import { useEffect, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { useReport } from '../feedback.js';
import { linkClick, sessionPath } from '../router.js';
import type { FeedEntry, SessionInfo, SessionStatus } from '../types.js';

/** The entries that say a session exists, what it is doing, or that it is gone. */
export const LIST_TYPES = [
  'session.started', 'turn.started', 'turn.ended', 'permission.requested', 'permission.resolved',
  'question.requested', 'question.resolved', 'session.ended', 'session.deleted',
] as const;

interface Tracked {
  info: SessionInfo;
  /** Permissions and questions asked and not yet resolved: waiting while any is open. */
  pending: number;
}

export function SessionList(props: { api: Api; current: string | undefined }) {
  const report = useReport();
  const [sessions, setSessions] = useState<SessionInfo[] | undefined>();
  useEffect(() => {
    const abort = new AbortController();
    const tracked = new Map<string, Tracked>();
    // Newest first: the daemon's list order, and a new session goes on top.
    const show = () => !abort.signal.aborted && setSessions([...tracked.values()].map((t) => t.info).reverse());
    const fetchInfo = (id: string) =>
      props.api.info(id).then((info) => {
        const t = tracked.get(id);
        if (t) t.info = { ...info, status: t.info.status }; // the feed knows the status best
        show();
      }, () => {}); // deleted meanwhile: its session.deleted entry removes it
    void (async () => {
      const head = await props.api.feedHead();
      for (const info of (await props.api.sessions()).reverse()) tracked.set(info.sessionId, { info, pending: 0 });
      show();
      for await (const entry of props.api.feed(head, { types: LIST_TYPES, signal: abort.signal })) {
        if (apply(tracked, entry) === 'new') void fetchInfo('event' in entry ? entry.event.session_id : '');
        show();
      }
    })().catch((err: unknown) => !abort.signal.aborted && report(err));
    return () => abort.abort();
  }, [props.api]);
  return (
    <section class="panel" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Sessions</h2>
      {sessions === undefined ? (
        <p class="muted">Loading…</p>
      ) : sessions.length === 0 ? (
        <p class="muted">None yet.</p>
      ) : (
        <ul class="session-list" aria-label="Sessions">
          {sessions.map((s) => (
            <li key={s.sessionId}>
              <a href={sessionPath(s.sessionId)} onClick={linkClick} aria-current={s.sessionId === props.current ? 'page' : undefined}>
                <span class="session-title">{s.title || s.sessionId}</span>
                <span class={`status status-${s.status}`}>{s.status}</span>
                {s.restored && <span class="badge">restored</span>}
                <span class="muted small">
                  {s.agent} · {new Date(s.createdAt).toLocaleTimeString()}
                </span>
              </a>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** One feed entry applied to the list; 'new' when it added a session the page must ask about. */
function apply(tracked: Map<string, Tracked>, entry: FeedEntry): 'new' | undefined {
  if (!('event' in entry)) {
    tracked.delete(entry.session_deleted.session_id);
    return undefined;
  }
  const e = entry.event;
  let t = tracked.get(e.session_id);
  let added: 'new' | undefined;
  if (!t) {
    if (e.type === 'session.ended') return undefined; // an entry of a session the list never had
    const info = { sessionId: e.session_id, agent: entry.agent, status: 'idle', createdAt: e.time, updatedAt: e.time, restored: false } as SessionInfo;
    tracked.set(e.session_id, (t = { info, pending: 0 }));
    added = 'new';
  }
  if (e.type === 'permission.requested' || e.type === 'question.requested') t.pending++;
  if (e.type === 'permission.resolved' || e.type === 'question.resolved') t.pending = Math.max(0, t.pending - 1);
  if (e.type === 'turn.ended') t.pending = 0;
  t.info = { ...t.info, status: next(t.info.status, e.type, t.pending), updatedAt: e.time };
  return added;
}

function next(status: SessionStatus, type: string, pending: number): SessionStatus {
  if (status === 'ended' || type === 'session.ended') return 'ended';
  if (type === 'turn.ended') return 'idle';
  if (type === 'turn.started') return 'running';
  if (type === 'permission.requested' || type === 'question.requested') return 'waiting';
  if (type === 'permission.resolved' || type === 'question.resolved') return pending > 0 ? 'waiting' : 'running';
  return status;
}
