// The form of a session id and of a message's attachment, apart from api.ts so that event schemas
// (delivery.ts) can name them without importing the API bodies that import them.
import { z } from './zod.js';

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const SessionIdParam = z
  .string()
  .regex(SESSION_ID, 'letters, digits, ".", "_" and "-", 1-128 characters')
  .openapi({ example: 'my-session' });
/** The id in the path of a route that looks a session up: any text, since an id no session can
 *  have is a 404 like any other unknown one. The document states the form every id has. */
export const SessionRef = z.string().openapi({ pattern: SESSION_ID.source, example: 'my-session' });

export const Attachment = z
  .object({
    path: z.string().min(1).openapi({ description: "A file under the session's cwd (absolute, or relative to the cwd); with --agent-user, one that user can read. Anything else is 403 attachment_refused (docs/security.md)" }),
    mime: z.string().optional(),
    filename: z.string().optional(),
  })
  .strict()
  .openapi('Attachment');
export type Attachment = z.infer<typeof Attachment>;
