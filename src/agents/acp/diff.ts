// ACP describes a file change as whole texts (`diff` tool content: path, oldText, newText); the
// universal file_ref part carries a unified diff. This makes one: the lines both texts share at the
// start and end are context (at most 3), everything between is one hunk. Not minimal for scattered
// edits, but always a correct, applyable diff, and pure.
const CONTEXT = 3;

export function unifiedDiff(path: string, oldText: string | null | undefined, newText: string): string {
  const before = oldText == null || oldText === '' ? [] : splitLines(oldText);
  const after = newText === '' ? [] : splitLines(newText);
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (tail < before.length - head && tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
  const start = Math.max(0, head - CONTEXT);
  const endBefore = Math.min(before.length, before.length - tail + CONTEXT);
  const endAfter = Math.min(after.length, after.length - tail + CONTEXT);
  const lines = [
    ...before.slice(start, head).map((l) => ` ${l}`),
    ...before.slice(head, before.length - tail).map((l) => `-${l}`),
    ...after.slice(head, after.length - tail).map((l) => `+${l}`),
    ...before.slice(before.length - tail, endBefore).map((l) => ` ${l}`),
  ];
  const oldCount = endBefore - start;
  const newCount = endAfter - start;
  // ACP paths are absolute: they stand as they are; a relative one gets git's a/ and b/.
  const [a, b] = path.startsWith('/') ? [path, path] : [`a/${path}`, `b/${path}`];
  const hunk = `@@ -${range(start, oldCount)} +${range(start, newCount)} @@`;
  return [`--- ${oldText == null ? '/dev/null' : a}`, `+++ ${b}`, hunk, ...lines].join('\n') + '\n';
}

/** `start,count` as unified diffs write it (1-based; an empty range names the line before it). */
function range(start: number, count: number): string {
  return count === 0 ? `${start},0` : `${start + 1},${count}`;
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
