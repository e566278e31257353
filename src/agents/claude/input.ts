// What the driver writes to Claude Code for a turn and for a question's answer, in the Agent SDK's
// shapes: the user message envelope (text, images as base64 blocks, other attachments named by
// path) and AskUserQuestion's answers.
import { extname, isAbsolute, resolve } from 'node:path';
import { ApiError } from '../../errors.js';
import { readAsAgent, type AgentUser } from '../../process/agent-user.js';
import type { Attachment } from '../../schema/api.js';
import type { TurnInput } from '../types.js';
import { isObject } from '../../util/is-object.js';


/** AskUserQuestion's answer: question text → the chosen label(s), joined with ", ". */
export function questionAnswers(input: Record<string, unknown>, answers: string[][]): Record<string, string> {
  const questions = Array.isArray(input.questions) ? input.questions : [];
  const out: Record<string, string> = {};
  questions.forEach((q, i) => {
    const text = isObject(q) && typeof q.question === 'string' ? q.question : undefined;
    const chosen = answers[i];
    if (text !== undefined && chosen && chosen.length > 0) out[text] = chosen.join(', ');
  });
  return out;
}

const IMAGE_TYPES: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp' };

/** The most of one image file read into memory for the prompt (as the agent user, with --agent-user). */
const MAX_IMAGE_BYTES = 32 * 1024 * 1024;

function imageType(a: Attachment): string | undefined {
  const known = new Set(Object.values(IMAGE_TYPES));
  if (a.mime) return known.has(a.mime) ? a.mime : undefined;
  return IMAGE_TYPES[extname(a.path).toLowerCase()];
}

/** The Agent SDK's user message envelope for one turn. */
export async function userLine(turn: TurnInput, cwd: string, user?: AgentUser): Promise<Record<string, unknown>> {
  const content: Record<string, unknown>[] = [];
  const files: string[] = [];
  for (const a of turn.attachments) {
    const path = isAbsolute(a.path) ? a.path : resolve(cwd, a.path);
    const media = imageType(a);
    if (!media) {
      files.push(path);
      continue;
    }
    let data: Buffer;
    try {
      data = await readAsAgent(path, user, MAX_IMAGE_BYTES); // with the agent's rights, never the daemon's
    } catch (err) {
      throw new ApiError('invalid_request', `Attachment '${a.path}' cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, {
        path: a.path,
      });
    }
    content.push({ type: 'image', source: { type: 'base64', media_type: media, data: data.toString('base64') } });
  }
  const text = files.length > 0 ? `${turn.message}\n\nAttached files:\n${files.map((f) => `- ${f}`).join('\n')}` : turn.message;
  content.unshift({ type: 'text', text });
  return { type: 'user', message: { role: 'user', content }, parent_tool_use_id: null, session_id: '' };
}
