// Runs turns on the mock agent with agentwire-client, answering its permission request and its
// question through callbacks, then follows the session's whole log and ends the session.
//
//   npm start                              # a daemon on http://127.0.0.1:2468 (another terminal)
//   npm run build -w client                # the client's dist/, which this import resolves to
//   node examples/turn-with-hitl.mjs
//
// AGENTWIRE_URL (or AGENTWIRE_PORT, as `agentwire acp` reads it) and AGENTWIRE_TOKEN point it at another daemon.
import { AgentwireError, createClient } from 'agentwire-client';

const client = createClient({
  baseUrl: process.env.AGENTWIRE_URL ?? `http://127.0.0.1:${process.env.AGENTWIRE_PORT ?? 2468}`,
  token: process.env.AGENTWIRE_TOKEN, // undefined: no Authorization header
});

const session = await client.sessions.create({ agent: 'mock' });
console.log(`session ${session.id}`);
try {
  // `permission` makes the mock ask to write notes.txt; the callback may be async (ask a person, a policy service …).
  const granted = await session.turn('permission', {
    onPermission: async (request) => {
      console.log(`permission asked: ${request.action} ${JSON.stringify(request.metadata)} -> once`);
      return 'once';
    },
    onEvent: (event) => event.type === 'item.delta' && process.stdout.write('.'),
  });
  console.log(`\nturn ${granted.turnId}: ${granted.reason}: ${granted.text}`);

  // `question` asks which color; the answer is one array of chosen options per question (null rejects).
  const answered = await session.turn('question', {
    onQuestion: (question) => {
      console.log(`question asked: ${question.prompt} [${question.options.join(', ')}] -> green`);
      return [['green']];
    },
  });
  console.log(`turn ${answered.turnId}: ${answered.reason}: ${answered.text}`);

  // The session's log from the start: events() replays it, and with untilEnded (the default) it
  // would follow live until session.ended; here it stops at the last event of the second turn.
  const last = answered.ended.sequence;
  const types = [];
  for await (const event of session.events({ after: 0 })) {
    types.push(event.type);
    if (event.sequence === last) break;
  }
  console.log(`${types.length} events: ${[...new Set(types)].join(', ')}`);
} catch (error) {
  if (error instanceof AgentwireError) console.error(`failed: ${error.code} (${error.status ?? 'no answer'}): ${error.detail}`);
  throw error;
} finally {
  await session.delete();
}
