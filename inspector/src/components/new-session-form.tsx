// The new-session form: agent, model and variant (from /models), agent mode and permission mode
// (from /modes), cwd and title. Empty choices are left out of the request: the daemon's defaults.
import { useEffect, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { useReport } from '../feedback.js';
import { navigate, sessionPath } from '../router.js';
import type { AgentInfo, CreateSessionRequest, ModelsResponse, ModesResponse } from '../types.js';

export function NewSessionForm(props: { api: Api }) {
  const report = useReport();
  const [agents, setAgents] = useState<AgentInfo[]>([]);
  const [agent, setAgent] = useState('mock');
  const [models, setModels] = useState<ModelsResponse | undefined>();
  const [modes, setModes] = useState<ModesResponse | undefined>();
  const [model, setModel] = useState('');
  const [variant, setVariant] = useState('');
  const [agentMode, setAgentMode] = useState('');
  const [permissionMode, setPermissionMode] = useState('');
  const [cwd, setCwd] = useState('');
  const [title, setTitle] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    props.api.agents().then(setAgents, report);
  }, [props.api]);
  useEffect(() => {
    setModels(undefined);
    setModes(undefined);
    setModel('');
    setVariant('');
    setAgentMode('');
    setPermissionMode('');
    props.api.models(agent).then(setModels, report);
    props.api.modes(agent).then(setModes, report);
  }, [props.api, agent]);

  const variants = models?.models.find((m) => m.id === model)?.variants ?? [];
  const submit = async (e: Event) => {
    e.preventDefault();
    const body: Record<string, string> = { agent };
    if (model) body.model = model;
    if (variant) body.variant = variant;
    if (agentMode) body.agentMode = agentMode;
    if (permissionMode) body.permissionMode = permissionMode;
    if (cwd.trim()) body.cwd = cwd.trim();
    if (title.trim()) body.title = title.trim();
    setBusy(true);
    try {
      const id = await props.api.create(body as unknown as CreateSessionRequest);
      navigate(sessionPath(id));
    } catch (err) {
      report(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="panel new-session" aria-label="New session" onSubmit={submit}>
      <h2>New session</h2>
      <label for="ns-agent">Agent</label>
      <select id="ns-agent" value={agent} onChange={(e) => setAgent(e.currentTarget.value)}>
          {(agents.length ? agents.map((a) => a.id) : ['mock']).map((id) => (
            <option value={id} key={id}>
              {id}
              {agents.find((a) => a.id === id)?.installed === false ? ' (not installed)' : ''}
            </option>
          ))}
        </select>
      <label for="ns-model">Model</label>
      <select id="ns-model" value={model} onChange={(e) => (setModel(e.currentTarget.value), setVariant(''))}>
          <option value="">default{models?.defaultModel ? ` (${models.defaultModel})` : ''}</option>
          {models?.models.map((m) => (
            <option value={m.id} key={m.id}>
              {m.name && m.name !== m.id ? `${m.name} (${m.id})` : m.id}
            </option>
          ))}
        </select>
      {variants.length > 0 && (
        <>
        <label for="ns-variant">Variant</label>
        <select id="ns-variant" value={variant} onChange={(e) => setVariant(e.currentTarget.value)}>
            <option value="">default</option>
            {variants.map((v) => (
              <option value={v} key={v}>
                {v}
              </option>
            ))}
          </select>
        </>
      )}
      <label for="ns-agent-mode">Mode</label>
      <select id="ns-agent-mode" value={agentMode} onChange={(e) => setAgentMode(e.currentTarget.value)}>
          <option value="">default{modes ? ` (${modes.defaultMode})` : ''}</option>
          {modes?.modes.map((m) => (
            <option value={m.id} key={m.id} title={m.description}>
              {m.name}
            </option>
          ))}
        </select>
      <label for="ns-permission-mode">Permission mode</label>
      <select id="ns-permission-mode" value={permissionMode} onChange={(e) => setPermissionMode(e.currentTarget.value)}>
          <option value="">default</option>
          {modes?.permissionModes.map((m) => (
            <option value={m} key={m}>
              {m}
            </option>
          ))}
        </select>
      <label for="ns-cwd">Working directory</label>
      <input id="ns-cwd" value={cwd} placeholder="the daemon's cwd" onInput={(e) => setCwd(e.currentTarget.value)} />
      <label for="ns-title">Title</label>
      <input id="ns-title" value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
      <button type="submit" disabled={busy}>
        Create
      </button>
    </form>
  );
}
