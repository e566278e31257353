// The raw universal events: sequence, time, type, source, synthetic; filters by type; include_raw
// (the stream is read again with the native payloads); any event copied as JSON. Only the newest
// rows are drawn, so a session of a million deltas stays responsive.
import { useState } from 'preact/hooks';
import { copyText, useReport } from '../feedback.js';
import type { UniversalEvent } from '../types.js';

const TYPES = [
  'session.started',
  'session.ended',
  'turn.started',
  'turn.ended',
  'item.started',
  'item.delta',
  'item.completed',
  'permission.requested',
  'permission.resolved',
  'question.requested',
  'question.resolved',
  'message.queued',
  'message.dequeued',
  'message.steered',
  'session.forked',
  'subagent.started',
  'subagent.ended',
  'error',
  'agent.unparsed',
] as const;
const SHOWN = 500;

export function EventsTable(props: { events: UniversalEvent[]; includeRaw: boolean; onIncludeRaw: (on: boolean) => void }) {
  const report = useReport();
  const [hidden, setHidden] = useState<Set<string>>(new Set());
  const [open, setOpen] = useState<number | undefined>();
  const [copied, setCopied] = useState<number | undefined>();
  const rows = props.events.filter((e) => !hidden.has(e.type));
  const shown = rows.slice(-SHOWN);
  const toggle = (type: string) => {
    const next = new Set(hidden);
    if (next.has(type)) next.delete(type);
    else next.add(type);
    setHidden(next);
  };
  return (
    <div class="events">
      <fieldset class="filters">
        <legend>Show event types</legend>
        {TYPES.map((type) => (
          <label key={type} class="chip">
            <input type="checkbox" checked={!hidden.has(type)} onChange={() => toggle(type)} />
            {type}
          </label>
        ))}
        <label class="chip raw">
          <input type="checkbox" checked={props.includeRaw} onChange={(e) => props.onIncludeRaw(e.currentTarget.checked)} />
          include_raw
        </label>
      </fieldset>
      {rows.length > SHOWN && <p class="muted small">Showing the newest {SHOWN} of {rows.length} events.</p>}
      <table aria-label="Events">
        <thead>
          <tr>
            <th scope="col">Sequence</th>
            <th scope="col">Time</th>
            <th scope="col">Type</th>
            <th scope="col">Source</th>
            <th scope="col">Synthetic</th>
            <th scope="col">Event</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((e) => (
            <tr key={e.sequence}>
              <td>{e.sequence}</td>
              <td>
                <time dateTime={e.time}>{e.time.slice(11, 23)}</time>
              </td>
              <td>{e.type}</td>
              <td>{e.source}</td>
              <td>{e.synthetic ? 'yes' : 'no'}</td>
              <td>
                <button type="button" class="link" aria-expanded={open === e.sequence} onClick={() => setOpen(open === e.sequence ? undefined : e.sequence)}>
                  {open === e.sequence ? 'Hide' : 'Show'} <span class="visually-hidden">event {e.sequence}</span>
                </button>{' '}
                <button
                  type="button"
                  class="link"
                  onClick={() =>
                    copyText(JSON.stringify(e, null, 2)).then(
                      (ok) => ok && setCopied(e.sequence),
                      report,
                    )
                  }
                >
                  {copied === e.sequence ? 'Copied' : 'Copy'} <span class="visually-hidden">event {e.sequence}</span>
                </button>
                {open === e.sequence && (
                  <pre class="json">
                    {JSON.stringify(e.data, null, 2)}
                    {props.includeRaw && `\n\nraw (native):\n${JSON.stringify(e.raw, null, 2)}`}
                  </pre>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
