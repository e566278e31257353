// Asks for the daemon's token (docs/inspector.md): kept in this tab's sessionStorage only.
import { useState } from 'preact/hooks';

export function ConnectForm(props: { refused: boolean; onConnect: (token: string) => void }) {
  const [value, setValue] = useState('');
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
        <p>This daemon needs its token (<code>--token</code>, <code>--token-file</code> or <code>AGENTWIRE_TOKEN</code>). It stays in this tab only.</p>
        {props.refused && <p role="alert" class="error-text">The daemon refused that token.</p>}
        <label for="connect-token">Token</label>
        <input id="connect-token" type="password" autocomplete="off" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        <button type="submit">Connect</button>
      </form>
    </main>
  );
}
