// Metrics that belong to the daemon's Node process rather than to one app instance: prom-client's
// default process metrics (CPU, memory, event-loop lag, GC) and the agent child processes, which
// src/process/spawn.ts tracks for the whole process so that none outlives the daemon.
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { processExitObservers, runningProcessCount, type ChildExit } from '../process/spawn.js';

let defaults: Registry | undefined;

/**
 * The default Node metrics, registered once per process: collecting them starts an event-loop
 * delay monitor and a GC observer that cannot be stopped, so each buildApp (tests build hundreds
 * in one process) must not start its own. They describe the process, so sharing them is also right.
 */
export function processRegistry(): Registry {
  if (!defaults) {
    defaults = new Registry();
    collectDefaultMetrics({ register: defaults });
  }
  return defaults;
}

/** Exit labels from a small fixed set: an exit code (0–255) or a signal name, and who ended it. */
export function exitLabels(exit: Pick<ChildExit, 'exitCode' | 'signal' | 'killed'>): { code: string; signal: string; killed: string } {
  return {
    code: exit.exitCode === null ? 'none' : String(exit.exitCode),
    signal: exit.signal ?? 'none',
    killed: exit.killed ? 'true' : 'false',
  };
}

/**
 * The agent-process gauge and exit counter of one app's registry. Agent processes are counted for
 * the whole daemon process (one app in production); `stop` unsubscribes when the app closes.
 */
export function agentProcessMetrics(registry: Registry): { stop: () => void } {
  new Gauge({
    name: 'agentwire_agent_processes',
    help: 'Agent CLI processes (process groups) running now, session agents and model/mode queries alike',
    registers: [registry],
    collect() {
      this.set(runningProcessCount());
    },
  });
  const exits = new Counter({
    name: 'agentwire_agent_process_exits_total',
    help: 'Agent CLI processes reaped, by exit code (none when killed by a signal), signal and whether the daemon killed it',
    labelNames: ['code', 'signal', 'killed'] as const,
    registers: [registry],
  });
  const observe = (exit: ChildExit) => exits.inc(exitLabels(exit));
  processExitObservers.add(observe);
  return { stop: () => void processExitObservers.delete(observe) };
}
