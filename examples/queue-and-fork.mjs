// Messages during a turn and a fork, with agentwire-client (docs/queue-steer-fork.md): a long mock
// turn, a message queued behind it and one steered into it, the queued one's own turn, then a fork
// that remembers the conversation while the parent does not see what the fork is told.
//
//   npm start                              # a daemon on http://127.0.0.1:2468 (another terminal)
//   npm run build -w client                # the client's dist/, which this import resolves to
//   node examples/queue-and-fork.mjs
//
// AGENTWIRE_URL (or AGENTWIRE_PORT, as `agentwire acp` reads it) and AGENTWIRE_TOKEN point it at another daemon.
import { createClient } from 'agentwire-client';

const client = createClient({
  baseUrl: process.env.AGENTWIRE_URL ?? `http://127.0.0.1:${process.env.AGENTWIRE_PORT ?? 2468}`,
  token: process.env.AGENTWIRE_TOKEN,
});

const session = await client.sessions.create({ agent: 'mock' });
let branch;
try {
  await session.send('slow 10'); // ten ticks, 100 ms apart: a turn that is still running below
  const queued = await session.send('echo the queued message', { delivery: 'queue' });
  console.log(`queued: ${queued.status} at position ${queued.position}`);
  // The running turn takes a steered message; turn() follows it to that turn's end.
  const steered = await session.turn('tabs, not spaces', { delivery: 'steer' });
  console.log(`steered into ${steered.turnId}: ${steered.text.split('\n').find((line) => line.includes('[steered'))}`);
  const next = await session.turn('echo after the queue', { delivery: 'queue' });
  console.log(`${next.turnId}: ${next.text}`);

  // A fork after the last turn: its own session and agent process, with the conversation so far.
  const forked = await session.fork();
  branch = forked.session;
  const { sessionId, forkedFrom } = forked.info;
  console.log(`forked ${sessionId} from ${forkedFrom.sessionId} at sequence ${forkedFrom.sequence}`);
  await branch.turn('echo only the fork hears this');
  const remembered = (await branch.turn('history')).text.split('\n');
  const parent = (await session.turn('history')).text.split('\n');
  console.log(`the fork remembers: ${remembered[0]} … ${remembered.at(-1)}`);
  console.log(`the parent remembers: ${parent[0]} … ${parent.at(-1)}`);
} finally {
  await branch?.delete();
  await session.delete();
}
