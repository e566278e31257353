// The mock agent program as a bare child process, for the tests that drive it without the daemon:
// every stdout line is parsed as MockOut, so anything the program prints out of dialect fails.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { MockOut, type MockIn } from '../../src/agents/mock/native.js';

const PROGRAM = fileURLToPath(new URL('../../src/agents/mock/program.js', import.meta.url));

export class Mock {
  readonly child: ChildProcessWithoutNullStreams;
  readonly lines: MockOut[] = [];
  stderr = '';
  readonly exited: Promise<number | null>;
  private waiters: (() => void)[] = [];

  /** `env` is added to the test's own environment (MOCK_AGENT_HOME, for one). */
  constructor(args: string[] = [], env: Record<string, string> = {}) {
    this.child = spawn(process.execPath, [PROGRAM, ...args], { stdio: 'pipe', env: { ...process.env, ...env } });
    this.child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    createInterface({ input: this.child.stdout }).on('line', (text) => {
      this.lines.push(MockOut.parse(JSON.parse(text)));
      for (const wake of this.waiters.splice(0)) wake();
    });
    // 'close', not 'exit': only then has all of stdout and stderr been read.
    this.exited = new Promise((resolve) => this.child.on('close', (code) => resolve(code)));
  }

  send(message: MockIn | string) {
    this.child.stdin.write((typeof message === 'string' ? message : JSON.stringify(message)) + '\n');
  }

  /** Resolves with every line so far once one at or after `from` satisfies `test`. */
  async until(test: (line: MockOut) => boolean, from = 0, timeoutMs = 5000): Promise<MockOut[]> {
    const deadline = Date.now() + timeoutMs;
    while (!this.lines.slice(from).some(test)) {
      if (Date.now() > deadline) throw new Error(`timed out; got ${JSON.stringify(this.lines)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return this.lines;
  }

  /** Sends a prompt and returns the turn's lines, `done` included. */
  async turn(text: string): Promise<MockOut[]> {
    await this.until((l) => l.type === 'ready');
    const from = this.lines.length;
    this.send({ type: 'prompt', text });
    await this.until((l) => l.type === 'done', from);
    return this.lines.slice(from);
  }
}
