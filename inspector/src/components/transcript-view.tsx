// The transcript: items in the order they started, drawn from their parts; text that is still
// streaming is shown as plain text as the deltas arrive (markdown once the item completes, so a
// long stream is not re-parsed on every delta); events that are not items shown in place. Every
// turn's end offers "Fork from here", enabled where the agent can fork. A sub-agent's work is drawn
// inside the card of the tool call that launched it, collapsible.
import type { EventOf } from 'agentwire-client';
import { useState } from 'preact/hooks';
import { linkClick, sessionPath } from '../router.js';
import type { Entry, ItemView, SubagentView, Transcript } from '../transcript.js';
import type { UniversalEvent, UniversalItem } from '../types.js';
import { Clipped, Part } from './parts.js';

/** What the transcript needs to offer forks: whether the agent can fork after a turn, and doing it. */
export interface Forking {
  /** Why there is no fork after this turn (the agent's capabilities), or undefined when there is. */
  refusal(ended: EventOf<'turn.ended'>): string | undefined;
  fork(at: number): void;
}

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

function ItemCard(props: { view: ItemView; transcript: Transcript; forking: Forking | undefined }) {
  const { item, streamed } = props.view;
  const launched = props.transcript.subagentsOf.get(item.item_id) ?? [];
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
      {launched.map((id) => (
        <SubagentBlock key={id} view={props.transcript.subagents.get(id)!} transcript={props.transcript} forking={props.forking} />
      ))}
    </article>
  );
}

/** A sub-agent: what it was asked, how it ended, and its own lines; open while it runs. */
function SubagentBlock(props: { view: SubagentView; transcript: Transcript; forking: Forking | undefined }) {
  const { started, ended, entries } = props.view;
  const [open, setOpen] = useState(true);
  const title = [started.agent_type, started.description].filter((s) => s !== undefined && s !== '').join(': ') || started.subagent_id;
  const state = ended ? ended.outcome : 'running';
  return (
    <section class={`subagent subagent-${state}`} aria-label={`Sub-agent ${title}`}>
      <header>
        <button type="button" class="link small" aria-expanded={open} aria-label={open ? 'Collapse sub-agent' : 'Expand sub-agent'} onClick={() => setOpen(!open)}>
          {open ? '▾' : '▸'}
        </button>
        <span class="item-label">Sub-agent {title}</span>
        <span class={`badge subagent-state-${state}`}>{state}</span>
        {!open && <span class="muted small">{entries.length} lines</span>}
      </header>
      {open && (
        <div class="subagent-lines">
          {started.prompt && <Clipped text={started.prompt} class="plain subagent-prompt" />}
          <Lines entries={entries} transcript={props.transcript} forking={props.forking} />
          {ended?.summary && <Clipped text={ended.summary} class="plain subagent-summary" />}
        </div>
      )}
    </section>
  );
}

function Lines(props: { entries: Entry[]; transcript: Transcript; forking: Forking | undefined }) {
  const t = props.transcript;
  return (
    <>
      {props.entries.map((entry) =>
        entry.kind === 'item' ? (
          <ItemCard key={entry.id} view={t.items.get(entry.id)!} transcript={t} forking={props.forking} />
        ) : entry.kind === 'subagent' ? (
          <SubagentBlock key={entry.id} view={t.subagents.get(entry.id)!} transcript={t} forking={props.forking} />
        ) : (
          <EventNote key={`e${entry.event.sequence}`} event={entry.event} forking={props.forking} />
        ),
      )}
    </>
  );
}

function EventNote(props: { event: UniversalEvent; forking: Forking | undefined }) {
  const e = props.event;
  switch (e.type) {
    case 'session.forked': {
      const parent = e.data.forked_from.session_id;
      return (
        <p class="note">
          Forked from <a href={sessionPath(parent)} onClick={linkClick}>{parent}</a> {e.data.at_turn ? `after ${e.data.at_turn}` : 'before its first turn'}.
        </p>
      );
    }
    case 'message.steered':
      // The steered message where the running turn took it (its user item is not drawn again).
      return (
        <article class="item kind-message role-user" aria-label="Steered message">
          <header>
            <span class="item-label">Steered message</span>
            <span class="badge">into {e.data.turn_id}</span>
          </header>
          <Part part={{ type: 'text', text: e.data.message }} markdown />
        </article>
      );
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
    case 'turn.ended': {
      const reason = e.data.metadata?.reason;
      const { forking } = props;
      const refusal = forking?.refusal(e);
      return (
        <div class="turn-end">
          {reason !== 'completed' && <p class="note">Turn ended: {String(reason ?? 'unknown')}.</p>}
          {forking && (
            <button
              type="button"
              class="link small"
              disabled={refusal !== undefined}
              title={refusal ?? `A new session with the conversation up to the end of ${e.data.turn_id ?? 'this turn'}`}
              onClick={() => forking.fork(e.sequence)}
            >
              Fork from here
            </button>
          )}
        </div>
      );
    }
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

export function TranscriptView(props: { transcript: Transcript; forking?: Forking }) {
  const t = props.transcript;
  if (t.entries.length === 0) return <p class="muted">No events yet.</p>;
  return (
    <div class="transcript" aria-label="Transcript" role="log">
      <Lines entries={t.entries} transcript={t} forking={props.forking} />
    </div>
  );
}
