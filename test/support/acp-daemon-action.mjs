// What the harness wrote to an ACP agent (test/agents/acp/harness.ts) as the daemon action it stands for,
// for test/agents/{gemini,qwen}/fixtures/from-recorded.mjs: a session/prompt request → {"$daemon":"turn"}
// at the point it was sent; our answer to session/request_permission → {"$daemon":
// "permission_reply"} (Gemini CLI and Qwen Code name their options proceed_once, proceed_always,
// cancel). Everything else we sent (initialize, session/new, session/set_model, "method not
// found" answers) is the driver's own business and is dropped.
const REPLY = { proceed_once: 'once', proceed_always: 'always', cancel: 'reject' };

/** @param {any} sent what the harness wrote @returns {object | null} the daemon action, or null to drop it */
export function acpDaemonAction(sent) {
  if (sent.method === 'session/prompt') {
    const prompt = sent.params?.prompt ?? [];
    const text = prompt.filter((/** @type {any} */ b) => b.type === 'text').map((/** @type {any} */ b) => b.text).join('');
    return { $daemon: 'turn', message: text };
  }
  if (sent.method !== undefined || sent.error) return null;
  const outcome = sent.result?.outcome;
  if (outcome?.outcome === 'selected') {
    const reply = REPLY[/** @type {keyof typeof REPLY} */ (outcome.optionId)];
    if (!reply) throw new Error(`from-recorded: unknown option ${outcome.optionId}`);
    return { $daemon: 'permission_reply', id: String(sent.id), reply };
  }
  throw new Error(`from-recorded: no daemon action for ${JSON.stringify(sent).slice(0, 200)}`);
}
