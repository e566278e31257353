// The daemon's version and health: asked once, and again whenever the daemon-wide feed the session
// list follows drops or comes back (the request log sees it), so the header says at once when
// the daemon goes away without a poll in the request log.
import type { Api, Health } from '../api.js';
import { FEED_STREAM } from '../requests.js';
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
    let lost = false;
    const unsubscribe = props.api.log.subscribe(() => {
      const state = props.api.log.streams.get(FEED_STREAM)?.state;
      if (state === 'lost' && !lost) setHealth('unreachable');
      else if (lost && (state === 'live' || state === 'resumed')) void poll(); // back: which version now?
      lost = state === 'lost' || (lost && state === 'connecting');
    });
    return () => {
      stop = true;
      unsubscribe();
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
