// The agents the daemon knows: installed or not, version, credentials found, the capability row;
// installing one shows that it is under way and for how long (the daemon answers when it is done).
import { useEffect, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { useReport } from '../feedback.js';
import type { AgentInfo } from '../types.js';

export function AgentsPanel(props: { api: Api }) {
  const report = useReport();
  const [agents, setAgents] = useState<AgentInfo[] | undefined>();
  const [installing, setInstalling] = useState<{ id: string; since: number } | undefined>();
  const [now, setNow] = useState(Date.now());
  const load = () => props.api.agents().then(setAgents, report);
  useEffect(() => void load(), [props.api]);
  useEffect(() => {
    if (!installing) return;
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, [installing]);

  const install = async (id: string) => {
    setInstalling({ id, since: Date.now() });
    setNow(Date.now());
    try {
      await props.api.install(id);
    } catch (err) {
      report(err);
    } finally {
      setInstalling(undefined);
      void load();
    }
  };

  return (
    <details class="panel agents">
      <summary>
        <h2>Agents</h2>
      </summary>
      {agents === undefined ? (
        <p class="muted">Loading…</p>
      ) : (
        <ul aria-label="Agents">
          {agents.map((a) => (
            <li key={a.id} class="agent">
              <p>
                <strong>{a.id}</strong> {a.installed ? <span class="good">installed{a.version ? ` ${a.version}` : ''}</span> : <span class="muted">not installed</span>}
                {' · '}
                {a.credentialsAvailable ? 'credentials found' : <span class="muted">no credentials</span>}
              </p>
              {a.capabilities && (
                <p class="badges" aria-label={`${a.id} capabilities`}>
                  {Object.entries(a.capabilities)
                    .filter(([, on]) => on)
                    .map(([name]) => (
                      <span class="badge" key={name}>
                        {name}
                      </span>
                    ))}
                </p>
              )}
              {a.adapterAvailable && a.id !== 'mock' && (
                <p>
                  {installing?.id === a.id ? (
                    <span role="status">
                      <progress aria-label={`Installing ${a.id}`} /> Installing {a.id}… {Math.round((now - installing.since) / 1000)} s
                    </span>
                  ) : (
                    <button type="button" disabled={installing !== undefined} onClick={() => void install(a.id)}>
                      {a.installed ? `Reinstall ${a.id}` : `Install ${a.id}`}
                      {a.pinnedVersion ? ` ${a.pinnedVersion}` : ''}
                    </button>
                  )}
                </p>
              )}
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}
