// The message box and the session's controls. Enter sends, Shift+Enter starts a new line. Each
// control is enabled only when the daemon would accept it (no 409s from this page): Send while
// idle, Interrupt while a turn runs, Terminate until the session ended, Delete always (confirmed).
import { useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { useReport } from '../feedback.js';
import { navigate } from '../router.js';

export function Composer(props: { api: Api; sessionId: string; status: string | undefined }) {
  const report = useReport();
  const [text, setText] = useState('');
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [sending, setSending] = useState(false);
  const { api, sessionId: id, status } = props;
  const canSend = status === 'idle' && !sending && text.trim() !== '';

  const send = async () => {
    if (!canSend) return;
    setSending(true);
    try {
      await api.send(id, text);
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
          placeholder={status === 'ended' ? 'The session has ended.' : 'Enter to send, Shift+Enter for a new line'}
          onInput={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              void send();
            }
          }}
        />
      <div class="buttons">
        <button type="submit" disabled={!canSend}>
          Send
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
