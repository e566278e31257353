// A settings file an agent CLI is pointed at by an environment variable (Qwen Code's
// QWEN_CODE_SYSTEM_SETTINGS_PATH; Gemini CLI's GEMINI_CLI_SYSTEM_SETTINGS_PATH works the same).
// Both CLIs merge a "system" settings file over the user's and the project's own, so what the
// daemon needs to hold (no pseudo-terminal, no telemetry, no self-update) wins without writing into
// the user's home.
//
// The file lives in a directory this daemon made fresh for its run (mkdtemp: a random name,
// created by this call or failing), never at a name another user could guess and make first: a
// settings file planted there would be handed to every later session (an approval mode, an MCP
// server command of its maker's; docs/security.md, "Planted files and hostile agents"). Within the
// run a file is written once per content (`wx`: never into a file that is already there) and shared
// by every session with the same settings. The directory is 0755 and its files 0644, the daemon's:
// an agent run as another user (--agent-user) reads them, and cannot change them. It holds no
// secret. The directory goes when the daemon exits.
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let runDir: Promise<string> | undefined;
/** The files written in this run, by path: the only ones ever handed out. */
const written = new Map<string, Promise<string>>();

/** This run's settings directory, made on first use. */
function settingsDir(): Promise<string> {
  runDir ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentwire-settings-'));
    await chmod(dir, 0o755);
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    return dir;
  })();
  runDir.catch(() => (runDir = undefined));
  return runDir;
}

/** Writes `settings` as JSON into this run's settings directory (once per content); its path. */
export async function settingsFile(name: string, settings: unknown): Promise<string> {
  const text = `${JSON.stringify(settings, null, 2)}\n`;
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 16);
  const path = join(await settingsDir(), `${name}-${hash}.json`);
  let file = written.get(path);
  if (!file) {
    file = writeFile(path, text, { mode: 0o644, flag: 'wx' }).then(() => path);
    written.set(path, file);
    file.catch(() => written.delete(path));
  }
  return file;
}
