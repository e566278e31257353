// One log line per HTTP request, at debug (docs/logging.md). Fastify's own request logging (a line
// when a request arrives and one when it is answered, at info) is off (the LogController in
// app.ts): at info a daemon whose inspector polls wrote a screenful a minute that said nothing.
// buildApp installs this only when the level lets debug through, so a daemon at info spends
// nothing per request on logging.
import type { FastifyInstance } from 'fastify';
import { LogMessage } from '../logging.js';

/**
 * Logs each request once its response is closed: answered (`finish` came first) or given up by the
 * client, as event streams mostly are (`aborted`). The hook goes in before the Host check so that a
 * refused request is logged too; it reads nothing of the request until it has been answered, and
 * the URL it logs is redacted by the logger's `req` serializer (src/logging.ts).
 */
export function installRequestLog(app: FastifyInstance): void {
  app.addHook('onRequest', (req, reply, done) => {
    // 'finish', not `writableFinished`: that stays false for a response without a socket (inject).
    let finished = false;
    reply.raw.once('finish', () => (finished = true));
    reply.raw.once('close', () => {
      // A request given up before its answer began has no status to tell.
      const answered = reply.raw.headersSent ? { res: reply } : {};
      req.log.debug({ req, ...answered, responseTime: reply.elapsedTime, ...(finished ? {} : { aborted: true }) }, LogMessage.request);
    });
    done();
  });
}
