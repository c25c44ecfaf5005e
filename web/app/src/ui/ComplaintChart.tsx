// ComplaintChart draws a book's daily spam-complaint rate over a window as
// bars, with the two lines mailbox providers judge bulk senders by: 0.1 %
// (what they expect to stay under) and 0.3 % (where they start blocking).
// The chart is an image to assistive technology, described by its caption
// and a table of the days that had email.
import type { Schemas } from '../api/client';

type Day = Schemas['DeliverabilityDay'];

/** percent writes a 0..1 rate as a percentage, with decimals where small. */
export function percent(rate: number): string {
  const p = rate * 100;
  return `${p === 0 ? '0' : p < 1 ? p.toFixed(2) : p < 10 ? p.toFixed(1) : p.toFixed(0)} %`;
}

const width = 720;
const height = 200;
const pad = { left: 48, right: 12, top: 12, bottom: 24 };
const lines = [
  { rate: 0.001, name: '0.1 %', label: 'expected maximum' },
  { rate: 0.003, name: '0.3 %', label: 'blocking threshold' },
];

export function ComplaintChart({ days }: { days: Day[] }) {
  const top = Math.max(0.004, ...days.map((d) => d.complaint_rate)) * 1.1;
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const y = (r: number) => pad.top + plotH - (r / top) * plotH;
  const bar = plotW / Math.max(1, days.length);
  const withMail = days.filter((d) => d.sent > 0);
  const worst = withMail.reduce<Day | null>((w, d) => (!w || d.complaint_rate > w.complaint_rate ? d : w), null);
  const summary = withMail.length
    ? `Daily spam-complaint rate over ${days.length} days; the highest, ${percent(worst!.complaint_rate)}, on ${worst!.day}. Lines at 0.1 % and 0.3 %.`
    : `No campaign email in the last ${days.length} days.`;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={summary} preserveAspectRatio="none">
        {days.map((d, i) =>
          d.sent > 0 ? (
            <rect
              class={d.complaint_rate >= 0.003 ? 'bar bad' : d.complaint_rate >= 0.001 ? 'bar warn' : 'bar'}
              x={pad.left + i * bar + bar * 0.15}
              width={Math.max(1, bar * 0.7)}
              y={y(d.complaint_rate)}
              height={Math.max(d.complaint_rate > 0 ? 1 : 0, pad.top + plotH - y(d.complaint_rate))}
            >
              <title>{`${d.day}: ${percent(d.complaint_rate)} of ${d.sent.toLocaleString('en')} sent`}</title>
            </rect>
          ) : null,
        )}
        {lines.map((l) => (
          <g class="threshold" data-rate={l.rate}>
            <line x1={pad.left} x2={width - pad.right} y1={y(l.rate)} y2={y(l.rate)} />
            <text x={pad.left - 6} y={y(l.rate) + 4} text-anchor="end">
              {l.name}
            </text>
          </g>
        ))}
        <line class="axis" x1={pad.left} x2={width - pad.right} y1={pad.top + plotH} y2={pad.top + plotH} />
        {days.length > 0 && (
          <>
            <text x={pad.left} y={height - 6}>
              {days[0].day}
            </text>
            <text x={width - pad.right} y={height - 6} text-anchor="end">
              {days[days.length - 1].day}
            </text>
          </>
        )}
      </svg>
      <figcaption>
        {summary} {lines.map((l) => `${l.name}: ${l.label}.`).join(' ')}
      </figcaption>
      {withMail.length > 0 && (
        <details>
          <summary>The days with email, as a table</summary>
          <table>
            <caption class="visually-hidden">Daily spam-complaint and bounce rates</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">Sent</th>
                <th scope="col">Complaint rate</th>
                <th scope="col">Bounce rate</th>
              </tr>
            </thead>
            <tbody>
              {withMail.map((d) => (
                <tr>
                  <th scope="row">{d.day}</th>
                  <td>{d.sent.toLocaleString('en')}</td>
                  <td>{percent(d.complaint_rate)}</td>
                  <td>{percent(d.bounce_rate)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </figure>
  );
}
