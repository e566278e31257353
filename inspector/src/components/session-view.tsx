// One session: its header and connection state, the transcript or the events table or the
// requests, the pending permission and question cards, the queued messages, and the composer. Its
// events come from one client stream (session.events(), which resumes by itself), folded by
// Transcript. Its agent's capabilities (GET /v1/agents) say whether Steer and each turn's
// "Fork from here" are offered.
import { useEffect, useLayoutEffect, useReducer, useRef, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { describe, useReport } from '../feedback.js';
import { navigate, sessionPath } from '../router.js';
import { Transcript } from '../transcript.js';
import type { Budget, Capabilities, SessionInfo, UsageTotals } from '../types.js';
import { Composer } from './composer.js';
import { ConnectionIndicator } from './connection-indicator.js';
import { EventsTable } from './events-table.js';
import { PermissionCard, QuestionCard } from './hitl-cards.js';
import { RequestsPanel } from './requests-panel.js';
import { QueuedMessages } from './queued-messages.js';
import { TranscriptView, type Forking } from './transcript-view.js';

type Tab = 'transcript' | 'events' | 'requests';
const TABS: [Tab, string][] = [
  ['transcript', 'Transcript'],
  ['events', 'Events'],
  ['requests', 'Requests'],
];

export function SessionView(props: { api: Api; id: string }) {
  const { api, id } = props;
  const report = useReport();
  const [info, setInfo] = useState<SessionInfo | undefined>();
  const [caps, setCaps] = useState<Capabilities | undefined>();
  const [missing, setMissing] = useState<string | undefined>();
  const [includeRaw, setIncludeRaw] = useState(false);
  const [tab, setTab] = useState<Tab>('transcript');
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const transcript = useRef(new Transcript());
  // The view follows new output while it is scrolled to the end, and stays put when the person
  // scrolled up to read.
  const panel = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  useLayoutEffect(() => {
    const el = panel.current;
    if (el && following.current) el.scrollTop = el.scrollHeight;
  });

  useEffect(() => {
    api.info(id).then(setInfo, (err) => ((err as { status?: number }).status === 404 ? setMissing(describe(err)) : report(err)));
  }, [api, id]);

  const agent = info?.agent;
  useEffect(() => {
    if (agent) api.agents().then((agents) => setCaps(agents.find((a) => a.id === agent)?.capabilities ?? undefined), report);
  }, [api, agent]);

  // One stream per (session, include_raw); events are folded as they come and drawn at most once
  // per frame, so a flood of deltas costs one render per frame, not one per event.
  useEffect(() => {
    transcript.current = new Transcript();
    rerender(0);
    const abort = new AbortController();
    let frame = 0;
    const draw = () => {
      frame = 0;
      rerender(0);
    };
    void (async () => {
      try {
        for await (const event of api.events(id, { includeRaw, signal: abort.signal, onReconnect: () => rerender(0) })) {
          transcript.current.apply(event);
          if (event.type === 'session.ended') api.info(id).then(setInfo, () => undefined);
          frame ||= requestAnimationFrame(draw);
        }
      } catch (err) {
        if (abort.signal.aborted) return;
        if ((err as { status?: number }).status === 404) setMissing(describe(err));
        else report(err);
      }
    })();
    return () => {
      abort.abort();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [api, id, includeRaw]);

  const t = transcript.current;
  const status = t.lastSequence > 0 ? t.status : info?.status;
  // An agent that forks nowhere gets no Fork buttons at all; one that forks only somewhere gets
  // them disabled, with the reason, where it cannot.
  const forking: Forking | undefined = caps && !caps.fork && !caps.forkAtTurn ? undefined : {
    // After the last turn with none running is the end of the conversation (capability fork); any
    // other turn is an earlier one (forkAtTurn). Unknown capabilities: offered, the daemon decides.
    refusal: (ended) => {
      const atEnd = ended.sequence === t.lastTurnEnd && !t.turnOpen;
      if (!caps || (atEnd ? caps.fork : caps.forkAtTurn)) return undefined;
      return `The ${agent} agent cannot fork ${atEnd ? 'a conversation' : 'at an earlier turn'}.`;
    },
    fork: (at) => void api.fork(id, at).then((forked) => navigate(sessionPath(forked)), report),
  };

  if (missing) {
    return (
      <section class="session" aria-label="Session">
        <h2>{id}</h2>
        <p role="status">{missing}</p>
      </section>
    );
  }
  return (
    <section class="session" aria-labelledby="session-heading">
      <div class="session-head">
        <h2 id="session-heading">{info?.title || id}</h2>
        <p class="muted small">
          {info ? `${info.agent} · model ${info.model ?? 'default'}${info.variant ? ` (${info.variant})` : ''} · mode ${info.agentMode} · permissions ${info.permissionMode} · ${info.cwd}` : id}
          {info?.restored && <span class="badge">restored</span>}
        </p>
        <p>
          Status: <span class={`status status-${status ?? 'unknown'}`} aria-label="Session status">{status ?? '…'}</span>
        </p>
        <Spend usage={t.usage ?? info?.usage} budget={info?.budget} />
        <ConnectionIndicator log={api.log} sessionId={id} lastSequence={t.lastSequence} ended={t.ended !== undefined} />
      </div>
      <div role="tablist" aria-label="Session views" class="tabs">
        {TABS.map(([value, label]) => (
          <button
            key={value}
            type="button"
            role="tab"
            id={`tab-${value}`}
            aria-selected={tab === value}
            aria-controls={`panel-${value}`}
            tabIndex={tab === value ? 0 : -1}
            onClick={() => setTab(value)}
            onKeyDown={(e) => {
              const i = TABS.findIndex(([v]) => v === tab);
              const next = e.key === 'ArrowRight' ? i + 1 : e.key === 'ArrowLeft' ? i - 1 : undefined;
              if (next === undefined) return;
              const [v] = TABS[(next + TABS.length) % TABS.length]!;
              setTab(v);
              document.getElementById(`tab-${v}`)?.focus();
            }}
          >
            {label}
          </button>
        ))}
      </div>
      <div
        role="tabpanel"
        id={`panel-${tab}`}
        aria-labelledby={`tab-${tab}`}
        class="tabpanel"
        ref={panel}
        tabIndex={0}
        onScroll={(e) => {
          const el = e.currentTarget;
          following.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
      >
        {tab === 'transcript' && <TranscriptView transcript={t} forking={forking} />}
        {tab === 'events' && <EventsTable events={t.events} includeRaw={includeRaw} onIncludeRaw={setIncludeRaw} />}
        {tab === 'requests' && <RequestsPanel log={api.log} />}
      </div>
      <div class="hitl">
        {[...t.permissions.values()].map((p) => (
          <PermissionCard key={p.permission_id} api={api} sessionId={id} permission={p} />
        ))}
        {[...t.questions.values()].map((q) => (
          <QuestionCard key={q.question_id} api={api} sessionId={id} question={q} />
        ))}
      </div>
      <QueuedMessages api={api} sessionId={id} queued={t.queued} />
      <Composer api={api} sessionId={id} status={status} queued={t.queued.size} agent={agent} steer={caps?.steer} />
    </section>
  );
}

/** What the session spent so far (live, from usage.updated) and its budget as it was when the page loaded it. */
function Spend(props: { usage: UsageTotals | undefined; budget: Budget | undefined }) {
  const { usage, budget } = props;
  if (!usage) return null;
  const cost = usage.cost_usd === undefined ? '' : ` · $${usage.cost_usd.toFixed(4)}${usage.cost_source === 'price_table' ? ' (price table)' : ''}`;
  const limits = Object.entries(budget ?? {}).map(([k, v]) => `${k} ${v}`);
  return (
    <p class="muted small" aria-label="Usage">
      Spent: {usage.input_tokens} input / {usage.output_tokens} output tokens{cost}
      {limits.length > 0 && ` · budget ${limits.join(', ')}`}
    </p>
  );
}
