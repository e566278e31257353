// Asks for the daemon's token (docs/inspector.md): kept in this tab's sessionStorage only. It says
// where the token is and how to print it in the daemon's own words: the detail of the 401 that
// brought the page here, or, when the page opened with no token at all, of the one call it makes
// without (shown as text: Preact escapes it).
import { useEffect, useState } from 'preact/hooks';
import { answerWithoutToken } from '../api-client.js';
import { tokenHelpOf } from '../token.js';

export function ConnectForm(props: { refused: boolean; help: string | undefined; onHelp: (help: string) => void; onConnect: (token: string) => void }) {
  const [value, setValue] = useState('');
  // Once per showing, and only while no 401 has said it: the answer is kept by the app, so a later
  // "Forget token" asks nothing. Never aborted: the person may connect before it answers.
  useEffect(() => {
    if (props.help === undefined) void answerWithoutToken().then((answer) => props.onHelp(tokenHelpOf(answer)));
  }, []);
  return (
    <main class="connect">
      <form
        aria-label="Connect"
        onSubmit={(e) => {
          e.preventDefault();
          if (value.trim()) props.onConnect(value.trim());
        }}
      >
        <h1>agentwire</h1>
        <p>This daemon needs its token. It stays in this tab only.</p>
        {props.refused && <p role="alert" class="error-text">The daemon refused that token.</p>}
        <p id="token-help" class="token-help">
          {props.help ?? 'Asking the daemon where its token is…'}
        </p>
        <label for="connect-token">Token</label>
        <input id="connect-token" type="password" autocomplete="off" required aria-describedby="token-help" value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        <button type="submit">Connect</button>
      </form>
    </main>
  );
}
