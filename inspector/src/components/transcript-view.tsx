// The transcript: items in the order they started, drawn from their parts; text that is still
// streaming is shown as plain text as the deltas arrive (markdown once the item completes, so a
// long stream is not re-parsed on every delta); events that are not items shown in place.
import type { ItemView, Transcript } from '../transcript.js';
import type { UniversalEvent, UniversalItem } from '../types.js';
import { Clipped, Part } from './parts.js';

function itemLabel(item: UniversalItem): string {
  switch (item.kind) {
    case 'message':
      return item.role === 'user' ? 'User message' : item.role === 'system' ? 'System message' : 'Assistant message';
    case 'tool_call':
      return `Tool call ${item.content.find((p) => p.type === 'tool_call')?.name ?? ''}`.trim();
    case 'tool_result':
      return 'Tool result';
    case 'system':
      return 'System message';
    case 'status':
      return 'Status';
    case 'unknown':
      return 'Unknown item';
  }
}

function ItemCard(props: { view: ItemView }) {
  const { item, streamed } = props.view;
  const streaming = item.status === 'in_progress';
  const label = itemLabel(item);
  return (
    <article class={`item kind-${item.kind} role-${item.role ?? 'none'} item-${item.status}`} aria-label={label}>
      <header>
        <span class="item-label">{label}</span>
        {item.status !== 'completed' && <span class={`badge item-status-${item.status}`}>{item.status === 'in_progress' ? 'streaming' : item.status}</span>}
      </header>
      {streaming && item.content.length === 0 ? (
        <Clipped text={streamed} class="plain streaming" />
      ) : (
        item.content.map((part, i) => <Part key={i} part={part} markdown={!streaming && item.kind === 'message'} />)
      )}
    </article>
  );
}

function EventNote(props: { event: UniversalEvent }) {
  const e = props.event;
  switch (e.type) {
    case 'session.started':
      return <p class="note">Session started{e.native_session_id ? ` (agent session ${e.native_session_id})` : ''}.</p>;
    case 'session.ended':
      return (
        <article class={`item session-ended ${e.data.reason === 'error' ? 'error' : ''}`} aria-label="Session ended">
          <header>
            <span class="item-label">
              Session ended: {e.data.reason}, by the {e.data.terminated_by}
              {e.data.exit_code !== undefined && e.data.exit_code !== null ? `, exit code ${e.data.exit_code}` : ''}
            </span>
          </header>
          {e.data.message && <p>{e.data.message}</p>}
          {e.data.stderr && (
            <details open={e.data.reason === 'error'}>
              <summary>stderr{e.data.stderr.total_lines !== undefined ? ` (${e.data.stderr.total_lines} lines${e.data.stderr.truncated ? ', middle left out' : ''})` : ''}</summary>
              <pre class="output">
                {e.data.stderr.head}
                {e.data.stderr.tail !== undefined && `\n…\n${e.data.stderr.tail}`}
              </pre>
            </details>
          )}
        </article>
      );
    case 'turn.ended':
      return <p class="note">Turn ended: {String(e.data.metadata?.reason ?? 'unknown')}.</p>;
    case 'permission.resolved':
      return (
        <p class="note">
          Permission <code>{e.data.action}</code>: {e.data.status}.
        </p>
      );
    case 'question.resolved':
      return (
        <p class="note">
          Question “{e.data.prompt}”: {e.data.status}
          {e.data.response ? `: ${e.data.response}` : ''}.
        </p>
      );
    case 'error':
      return (
        <article class="item error" aria-label="Error">
          <header>
            <span class="item-label">Error{e.data.code ? ` (${e.data.code})` : ''}</span>
          </header>
          <p>{e.data.message}</p>
        </article>
      );
    case 'agent.unparsed':
      return (
        <p class="note warn">
          The agent printed something the daemon could not read ({e.data.location}: {e.data.error}); see the Events tab with include_raw.
        </p>
      );
    default:
      return null;
  }
}

export function TranscriptView(props: { transcript: Transcript }) {
  const t = props.transcript;
  if (t.entries.length === 0) return <p class="muted">No events yet.</p>;
  return (
    <div class="transcript" aria-label="Transcript" role="log">
      {t.entries.map((entry) =>
        entry.kind === 'item' ? <ItemCard key={entry.id} view={t.items.get(entry.id)!} /> : <EventNote key={`e${entry.event.sequence}`} event={entry.event} />,
      )}
    </div>
  );
}
