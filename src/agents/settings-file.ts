// A settings file an agent CLI is pointed at by an environment variable (Gemini CLI's
// GEMINI_CLI_SYSTEM_SETTINGS_PATH, Qwen Code's QWEN_CODE_SYSTEM_SETTINGS_PATH). Both CLIs merge a
// "system" settings file over the user's and the project's own, so what the daemon needs to hold
// (no pseudo-terminal, no telemetry, no self-update) wins without writing into the user's home.
//
// The file is named after its content, written once and never changed: every session with the same
// settings shares it, none can see a half-written one (write to a temp name, then rename), and
// nothing has to remove it when a session ends. It is readable by everyone (it holds no secret), so
// an agent run as another user (--agent-user) reads it too.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Writes `settings` as JSON under `<tmpdir>/agentwire-settings/` (once per content); its path. */
export async function settingsFile(name: string, settings: unknown, dir = join(tmpdir(), 'agentwire-settings')): Promise<string> {
  const text = `${JSON.stringify(settings, null, 2)}\n`;
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 16);
  const path = join(dir, `${name}-${hash}.json`);
  if (existsSync(path)) return path;
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const staging = `${path}.${process.pid}-${Math.random().toString(36).slice(2)}`;
  await writeFile(staging, text, { mode: 0o644 });
  await rename(staging, path);
  return path;
}
