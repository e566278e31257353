// What agentwire sends Codex as a user's input: turn/start's `input` items for a message and its
// attachments, and the answer to a request_user_input question (v2/TurnStartParams,
// v2/ToolRequestUserInputResponse).
import { extname, isAbsolute, resolve } from 'node:path';
import type { Attachment } from '../../schema/api.js';
import type { TurnInput } from '../types.js';
import { isObject } from '../../util/is-object.js';

/** request_user_input's answer: question id → {answers: the chosen labels}, in question order. */
export function userInputAnswers(params: unknown, answers: string[][]): Record<string, { answers: string[] }> {
  const questions = isObject(params) && Array.isArray(params.questions) ? params.questions : [];
  const out: Record<string, { answers: string[] }> = {};
  questions.forEach((q, i) => {
    if (isObject(q) && typeof q.id === 'string') out[q.id] = { answers: answers[i] ?? [] };
  });
  return out;
}

const IMAGE_EXTENSIONS = new Set(['.png', '.jpg', '.jpeg', '.gif', '.webp']);
const isImage = (a: Attachment) => (a.mime ? a.mime.startsWith('image/') : IMAGE_EXTENSIONS.has(extname(a.path).toLowerCase()));

/** turn/start's `input`: the text (other attachments named by path), then one localImage per image. */
export function turnInput(turn: TurnInput, cwd: string): Record<string, unknown>[] {
  const images: Record<string, unknown>[] = [];
  const files: string[] = [];
  for (const a of turn.attachments) {
    const path = isAbsolute(a.path) ? a.path : resolve(cwd, a.path);
    if (isImage(a)) images.push({ type: 'localImage', path });
    else files.push(path);
  }
  const text = files.length > 0 ? `${turn.message}\n\nAttached files:\n${files.map((f) => `- ${f}`).join('\n')}` : turn.message;
  return [{ type: 'text', text, text_elements: [] }, ...images];
}
