// The messages waiting in the session's queue (folded from message.queued / message.dequeued by
// Transcript), in the order they will start, each with a way to take it out before it starts.
import type { Api } from '../api.js';
import { useReport } from '../feedback.js';
import type { QueuedData } from '../types.js';

export function QueuedMessages(props: { api: Api; sessionId: string; queued: ReadonlyMap<string, QueuedData> }) {
  const report = useReport();
  if (props.queued.size === 0) return null;
  return (
    <section class="queued" aria-labelledby="queued-heading">
      <h3 id="queued-heading">Queued</h3>
      <ol aria-label="Queued messages">
        {[...props.queued.values()].map((m) => (
          <li key={m.message_id}>
            <span class="queued-text">{m.message}</span>
            {m.delivery === 'interrupt' && <span class="badge">after the interrupt</span>}
            <button
              type="button"
              class="link small"
              aria-label="Cancel queued message"
              title="Take the message out of the queue before it starts"
              // A 404 means it started meanwhile: its dequeued event removes it from the list anyway.
              onClick={() => void props.api.cancelQueued(props.sessionId, m.message_id).catch((err: { status?: number }) => err.status !== 404 && report(err))}
            >
              Cancel
            </button>
          </li>
        ))}
      </ol>
    </section>
  );
}
