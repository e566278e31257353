// Every request this page made (through the client), newest first, each copyable as the
// equivalent curl command. The token is never copied: curl gets "$AGENTWIRE_TOKEN".
import { useEffect, useReducer, useState } from 'preact/hooks';
import { copyText, useReport } from '../feedback.js';
import { curlOf, type RequestLog } from '../requests.js';

export function RequestsPanel(props: { log: RequestLog }) {
  const report = useReport();
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const [copied, setCopied] = useState<number | undefined>();
  useEffect(() => props.log.subscribe(() => rerender(0)), [props.log]);
  const requests = [...props.log.requests].reverse();
  return (
    <table aria-label="Requests" class="requests">
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Method</th>
          <th scope="col">Path</th>
          <th scope="col">Status</th>
          <th scope="col">curl</th>
        </tr>
      </thead>
      <tbody>
        {requests.map((r) => {
          const url = new URL(r.url);
          return (
            <tr key={r.id}>
              <td>
                <time dateTime={r.time}>{r.time.slice(11, 23)}</time>
              </td>
              <td>{r.method}</td>
              <td class="path">{url.pathname + url.search}</td>
              <td>{r.status ?? '…'}</td>
              <td>
                <button type="button" class="link" onClick={() => copyText(curlOf(r)).then((ok) => ok && setCopied(r.id), report)}>
                  {copied === r.id ? 'Copied' : 'Copy curl'} <span class="visually-hidden">for request {r.id}</span>
                </button>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
