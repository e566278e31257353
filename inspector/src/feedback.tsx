// Problems the page ran into (a refused request, a failed copy), shown in one live region instead
// of the console: a person sees them, a screen reader announces them, a test can read them.
import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useState } from 'preact/hooks';

type Report = (error: unknown) => void;

const ReportContext = createContext<Report>(() => undefined);

export function useReport(): Report {
  return useContext(ReportContext);
}

/** The message a person should read: the problem's detail for daemon errors. */
export function describe(error: unknown): string {
  if (error && typeof error === 'object') {
    const e = error as { detail?: unknown; message?: unknown; code?: unknown; status?: unknown };
    const text = typeof e.detail === 'string' && e.detail ? e.detail : typeof e.message === 'string' ? e.message : String(error);
    return typeof e.status === 'number' ? `${text} (${e.status}${typeof e.code === 'string' ? ` ${e.code}` : ''})` : text;
  }
  return String(error);
}

export function Feedback(props: { children: ComponentChildren; onUnauthorized: (error: unknown) => void }) {
  const [message, setMessage] = useState<string | undefined>();
  const report = useCallback(
    (error: unknown) => {
      if ((error as { status?: unknown } | undefined)?.status === 401) props.onUnauthorized(error);
      else setMessage(describe(error));
    },
    [props.onUnauthorized],
  );
  return (
    <ReportContext.Provider value={report}>
      <div class="feedback" role="alert">
        {message && (
          <p>
            {message}{' '}
            <button type="button" class="link" onClick={() => setMessage(undefined)}>
              Dismiss
            </button>
          </p>
        )}
      </div>
      {props.children}
    </ReportContext.Provider>
  );
}

/** Copies text; where the clipboard is refused, shows it selected for the person to copy. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    window.prompt('Copy with Ctrl+C:', text);
    return false;
  }
}
