// The daemon's version and health, polled: the header says at once when the daemon goes away.
import type { Api, Health } from '../api.js';
import { useEffect, useState } from 'preact/hooks';

export function Header(props: { api: Api; signedIn: boolean; onSignOut: () => void }) {
  const [health, setHealth] = useState<Health | 'unreachable' | undefined>();
  useEffect(() => {
    let stop = false;
    const poll = () =>
      props.api.health().then(
        (h) => !stop && setHealth(h),
        () => !stop && setHealth('unreachable'),
      );
    void poll();
    const timer = setInterval(poll, 10_000);
    return () => {
      stop = true;
      clearInterval(timer);
    };
  }, [props.api]);
  return (
    <header class="header">
      <h1>
        <a href="/ui/">agentwire</a> <span class="muted">inspector</span>
      </h1>
      <p class="health" aria-label="Daemon">
        {health === undefined ? 'Connecting…' : health === 'unreachable' ? <span class="bad">Daemon unreachable</span> : (
          <>
            <span class={health.status === 'ok' ? 'good' : 'bad'}>{health.status === 'ok' ? 'Healthy' : health.status}</span> · v{health.version}
          </>
        )}
      </p>
      <nav class="header-links" aria-label="Links">
        <a href="/docs" target="_blank" rel="noopener">
          API reference
        </a>
        {props.signedIn && (
          <button type="button" class="link" onClick={props.onSignOut}>
            Forget token
          </button>
        )}
      </nav>
    </header>
  );
}
