// The paths a client gives a session, resolved and checked before anything starts: its working
// directory (at create) and a message's attachments (before the turn opens).
import { statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { ApiError } from '../errors.js';
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
 * still taken before anything is awaited): a missing file is the client's 400.
 */
export function resolveAttachments(attachments: Attachment[] | undefined, cwd: string, sessionId: string): Attachment[] {
  return (attachments ?? []).map((a, i) => {
    const path = isAbsolute(a.path) ? a.path : resolve(cwd, a.path);
    if (!statSync(path, { throwIfNoEntry: false })?.isFile()) {
      throw new ApiError('invalid_request', `attachments[${i}].path '${a.path}' is not a readable file (relative paths are resolved against the session's cwd).`, {
        sessionId,
      });
    }
    return { ...a, path };
  });
}
