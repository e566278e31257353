// The paths a client gives a session, resolved and checked before anything starts: its working
// directory (at create) and a message's attachments (before the turn opens).
import { realpathSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { ApiError } from '../errors.js';
import { agentMayRead, type AgentUser } from '../process/agent-user.js';
import type { Attachment } from '../schema/api.js';

/** Resolves and checks a session's working directory (400 when it does not exist). */
export async function resolveCwd(cwd: string | undefined, base: string): Promise<string> {
  const dir = cwd ? (isAbsolute(cwd) ? cwd : resolve(base, cwd)) : base;
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new ApiError('invalid_cwd', `cwd '${dir}' does not exist or is not a directory.`, { cwd: dir });
  return dir;
}

/**
 * Attachments resolved against the session's cwd and checked synchronously (so the turn lock is
 * still taken before anything is awaited): a missing file is the client's 400; a file outside the
 * session's cwd (after symbolic links), or one the agent user could not read, is a 403
 * `attachment_refused` (docs/security.md, "Planted files and hostile agents").
 */
export function resolveAttachments(attachments: Attachment[] | undefined, cwd: string, sessionId: string, user?: AgentUser): Attachment[] {
  return (attachments ?? []).map((a, i) => {
    const path = isAbsolute(a.path) ? a.path : resolve(cwd, a.path);
    if (!statSync(path, { throwIfNoEntry: false })?.isFile()) {
      throw new ApiError('invalid_request', `attachments[${i}].path '${a.path}' is not a readable file (relative paths are resolved against the session's cwd).`, {
        sessionId,
      });
    }
    refuseOutside(realpathSync(path), a.path, i, cwd, sessionId, user);
    return { ...a, path };
  });
}

/** Only from where the session may read: under its cwd, and readable by its agent user. */
function refuseOutside(real: string, given: string, i: number, cwd: string, sessionId: string, user: AgentUser | undefined): void {
  const under = relative(realpathSync(cwd), real);
  if (under === '' || under.startsWith('..') || isAbsolute(under)) {
    throw new ApiError('attachment_refused', `attachments[${i}].path '${given}' is outside the session's cwd '${cwd}' (symbolic links followed); a session attaches only files under its cwd.`, {
      sessionId,
      path: given,
    });
  }
  if (user && !agentMayRead(real, user)) {
    throw new ApiError('attachment_refused', `attachments[${i}].path '${given}' cannot be read by the agent user '${user.name}'; the daemon reads nothing for an agent that it could not read itself.`, {
      sessionId,
      path: given,
    });
  }
}
