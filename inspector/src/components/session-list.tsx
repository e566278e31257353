// The daemon's sessions, newest first (its own order), with their live status: polled, and at
// once after this page created, ended or deleted one.
import { useEffect, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { useReport } from '../feedback.js';
import { linkClick, sessionPath } from '../router.js';
import type { SessionInfo } from '../types.js';

const listeners = new Set<() => void>();
/** Tells every list to refresh now. */
export function sessionsChanged(): void {
  for (const l of listeners) l();
}

export function SessionList(props: { api: Api; current: string | undefined }) {
  const report = useReport();
  const [sessions, setSessions] = useState<SessionInfo[] | undefined>();
  useEffect(() => {
    let stop = false;
    let failed = false;
    const load = () =>
      props.api.sessions().then(
        (s) => {
          failed = false;
          if (!stop) setSessions(s);
        },
        (err) => {
          // Said once per outage, not every poll.
          if (!failed && !stop) report(err);
          failed = true;
        },
      );
    void load();
    const timer = setInterval(load, 3_000);
    listeners.add(load);
    return () => {
      stop = true;
      clearInterval(timer);
      listeners.delete(load);
    };
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
