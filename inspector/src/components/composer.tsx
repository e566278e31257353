// The message box and the session's controls. Enter sends (queues while a turn runs), Shift+Enter
// starts a new line. Each control is enabled only when the daemon would accept it (no 409s from
// this page): Send while idle with nothing queued, Queue while a turn runs (or messages wait),
// Steer while a turn runs and the agent can take it (capability steer), Interrupt while a turn
// runs, Terminate until the session ended, Delete always (confirmed).
import { useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { useReport } from '../feedback.js';
import { navigate } from '../router.js';
import type { Delivery } from '../types.js';

export function Composer(props: { api: Api; sessionId: string; status: string | undefined; queued: number; agent: string | undefined; steer: boolean | undefined }) {
  const report = useReport();
  const [text, setText] = useState('');
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [sending, setSending] = useState(false);
  const { api, sessionId: id, status } = props;
  const turn = status === 'running' || status === 'waiting';
  const ready = !sending && text.trim() !== '';
  // A plain message is refused while messages wait (it would overtake them): those go through the queue too.
  const canSend = status === 'idle' && props.queued === 0 && ready;
  const canQueue = (turn || (status === 'idle' && props.queued > 0)) && ready;
  const canSteer = turn && props.steer === true && ready;
  const steerTitle =
    props.steer === false ? `The ${props.agent ?? ''} agent cannot take a message into a running turn; queue it instead.` : 'Give the message to the running turn';

  const send = async (delivery?: Delivery) => {
    if (!(delivery === undefined ? canSend : delivery === 'steer' ? canSteer : canQueue)) return;
    setSending(true);
    try {
      await (delivery ? api.deliver(id, text, delivery) : api.send(id, text));
      setText('');
    } catch (err) {
      report(err);
    } finally {
      setSending(false);
    }
  };
  // The session list hears what an action changed from the daemon's feed.
  const act = (call: () => Promise<void>) => () => void call().catch(report);

  return (
    <form
      class="composer"
      aria-label="Composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <label for="composer-message">Message</label>
      <textarea id="composer-message"
          rows={3}
          value={text}
          disabled={status === 'ended'}
          placeholder={status === 'ended' ? 'The session has ended.' : canSend || !(turn || props.queued > 0) ? 'Enter to send, Shift+Enter for a new line' : 'Enter to queue, Shift+Enter for a new line'}
          onInput={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              void send(canSend ? undefined : 'queue');
            }
          }}
        />
      <div class="buttons">
        <button type="submit" disabled={!canSend}>
          Send
        </button>
        <button type="button" disabled={!canQueue} title="Run the message as the next turn, once this one (and any queued before it) has ended" onClick={() => void send('queue')}>
          Queue
        </button>
        <button type="button" disabled={!canSteer} title={steerTitle} onClick={() => void send('steer')}>
          Steer
        </button>
        <button type="button" disabled={status !== 'running' && status !== 'waiting'} onClick={act(() => api.interrupt(id))}>
          Interrupt
        </button>
        <button type="button" class="danger" disabled={status === 'ended' || status === undefined} onClick={act(() => api.terminate(id))}>
          Terminate
        </button>
        {confirmDelete ? (
          <>
            <button
              type="button"
              class="danger"
              onClick={act(async () => {
                await api.remove(id);
                navigate('/ui/');
              })}
            >
              Confirm delete
            </button>
            <button type="button" onClick={() => setConfirmDelete(false)}>
              Keep
            </button>
          </>
        ) : (
          <button type="button" onClick={() => setConfirmDelete(true)}>
            Delete
          </button>
        )}
      </div>
    </form>
  );
}
