// The page: the Connect form while the daemon wants a token the page does not have, then the
// header, the sidebar (new session, sessions, agents) and the open session.
import { useCallback, useMemo, useState } from 'preact/hooks';
import { createApi } from '../api-client.js';
import { Feedback } from '../feedback.js';
import { useRoute } from '../router.js';
import { forgetToken, storedToken, storeToken, takeToken, tokenHelpOf, tokenRequired } from '../token.js';
import { AgentsPanel } from './agents-panel.js';
import { ConnectForm } from './connect-form.js';
import { Header } from './header.js';
import { NewSessionForm } from './new-session-form.js';
import { SessionList } from './session-list.js';
import { SessionView } from './session-view.js';

export function App() {
  const needsToken = tokenRequired();
  const { token, refused, help, learnHelp, connect, unauthorized, signOut } = useToken();
  const api = useMemo(() => (needsToken && !token ? undefined : createApi(token)), [token, needsToken]);
  const route = useRoute();

  if (!api) return <ConnectForm refused={refused} help={help} onHelp={learnHelp} onConnect={connect} />;
  return (
    <Feedback onUnauthorized={(error) => unauthorized(token, error)}>
      <Header api={api} signedIn={needsToken} onSignOut={signOut} />
      <div class="layout">
        <nav class="sidebar" aria-label="Sessions and agents">
          <NewSessionForm api={api} />
          <SessionList api={api} current={route.page === 'session' ? route.id : undefined} />
          <AgentsPanel api={api} />
        </nav>
        <main class="main">
          {route.page === 'session' ? (
            <SessionView key={route.id} api={api} id={route.id} />
          ) : (
            <section class="welcome" aria-label="Welcome">
              <h2>No session open</h2>
              <p>Create a session with the form, or open one from the list. The mock agent needs nothing installed: send it <code>help</code>.</p>
            </section>
          )}
        </main>
      </div>
    </Feedback>
  );
}

/** The token in use, whether the daemon refused the last one, and where the token is (help). */
function useToken() {
  const [token, setToken] = useState(() => takeToken());
  const [refused, setRefused] = useState(false);
  // Where the token is, as the daemon's last 401 said (the Connect form shows it); undefined until one did.
  const [help, setHelp] = useState<string | undefined>();
  const learnHelp = useCallback((text: string) => setHelp((known) => known ?? text), []);
  // `refused` is the token the 401 answered. A request made with an earlier token can be answered
  // after the person typed a new one (the wrong token's calls are several, and a 401 for one shows
  // the form while the others are still out): that late answer says nothing about the new token.
  const unauthorized = useCallback((refused: string | undefined, error: unknown) => {
    if (refused !== storedToken()) return;
    forgetToken();
    setHelp(tokenHelpOf(error));
    setRefused(true);
    setToken(undefined);
  }, []);
  const signOut = useCallback(() => {
    forgetToken();
    setRefused(false);
    setToken(undefined);
  }, []);
  const connect = useCallback((typed: string) => {
    storeToken(typed);
    setRefused(false);
    setToken(typed);
  }, []);
  return { token, refused, help, learnHelp, connect, unauthorized, signOut };
}
