// Human in the loop. A card stays while its request is pending in the stream: it disappears when
// the stream says it was resolved, whoever answered it (this page, another client, a policy or
// timeout of the daemon). Replying only sends the answer; the card goes with the resolution event.
import { useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { useReport } from '../feedback.js';
import type { PermissionEventData, PermissionReply, QuestionEventData } from '../types.js';

export function PermissionCard(props: { api: Api; sessionId: string; permission: PermissionEventData }) {
  const report = useReport();
  const [sent, setSent] = useState(false);
  const p = props.permission;
  const reply = (r: PermissionReply) => {
    setSent(true);
    props.api.replyPermission(props.sessionId, p.permission_id, r).catch((err) => {
      setSent(false);
      report(err);
    });
  };
  if (p.action === 'budget') return <BudgetCard permission={p} sent={sent} reply={reply} />;
  const details = p.metadata === undefined ? undefined : JSON.stringify(p.metadata, null, 2);
  return (
    <section class="card permission" role="region" aria-label="Permission request">
      <h3>
        Permission request: <code>{p.action}</code>
      </h3>
      {details && <pre class="json">{details}</pre>}
      <div class="buttons">
        <button type="button" disabled={sent} onClick={() => reply('once')}>
          Allow once
        </button>
        <button type="button" disabled={sent} onClick={() => reply('always')}>
          Always allow
        </button>
        <button type="button" class="danger" disabled={sent} onClick={() => reply('reject')}>
          Reject
        </button>
      </div>
    </section>
  );
}

const LIMIT_NAMES: Record<string, string> = { max_tokens: 'tokens', max_cost_usd: 'cost (USD)', max_turns: 'turns' };

/** The daemon's own request when a session's budget is crossed (docs/budgets.md): what was spent against which limit. */
function BudgetCard(props: { permission: PermissionEventData; sent: boolean; reply: (r: PermissionReply) => void }) {
  const m = (props.permission.metadata ?? {}) as { limit?: string; limit_value?: number; spent?: number; step?: number; paused?: string };
  const limit = LIMIT_NAMES[m.limit ?? ''] ?? m.limit ?? 'budget';
  const where = m.paused === 'before_turn' ? 'The next turn waits' : 'The agent waits before its next step';
  return (
    <section class="card permission budget" role="region" aria-label="Budget request">
      <h3>Budget reached: {limit}</h3>
      <p>
        Spent {m.spent} of {m.limit_value}. {where}.
      </p>
      <div class="buttons">
        <button type="button" disabled={props.sent} onClick={() => props.reply('once')}>
          Raise by {m.step ?? m.limit_value} and go on
        </button>
        <button type="button" disabled={props.sent} onClick={() => props.reply('always')}>
          Lift this limit
        </button>
        <button type="button" class="danger" disabled={props.sent} onClick={() => props.reply('reject')}>
          Stop the turn
        </button>
      </div>
    </section>
  );
}

export function QuestionCard(props: { api: Api; sessionId: string; question: QuestionEventData }) {
  const report = useReport();
  const q = props.question;
  const [chosen, setChosen] = useState<string[]>([]);
  const [free, setFree] = useState('');
  const [sent, setSent] = useState(false);
  const send = (call: Promise<void>) => {
    setSent(true);
    call.catch((err) => {
      setSent(false);
      report(err);
    });
  };
  const answers = [...chosen, ...(free.trim() ? [free.trim()] : [])];
  return (
    <section class="card question" role="region" aria-label="Question">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (answers.length) send(props.api.replyQuestion(props.sessionId, q.question_id, [answers]));
        }}
      >
        <fieldset>
          <legend>{q.prompt}</legend>
          {q.options.map((o) => (
            <label key={o} class="option">
              <input
                type="checkbox"
                checked={chosen.includes(o)}
                onChange={(e) => setChosen(e.currentTarget.checked ? [...chosen, o] : chosen.filter((c) => c !== o))}
              />
              {o}
            </label>
          ))}
          <label>
            Your own answer
            <input value={free} onInput={(e) => setFree(e.currentTarget.value)} />
          </label>
        </fieldset>
        <div class="buttons">
          <button type="submit" disabled={sent || answers.length === 0}>
            Submit answer
          </button>
          <button type="button" class="danger" disabled={sent} onClick={() => send(props.api.rejectQuestion(props.sessionId, q.question_id))}>
            Reject
          </button>
        </div>
      </form>
    </section>
  );
}
