// The tabs of a campaign's screens: its sequence, its participants, its report.
const tabs = [
  { key: 'sequence', name: 'Sequence', path: '' },
  { key: 'participants', name: 'Participants', path: '/participants' },
  { key: 'report', name: 'Report', path: '/report' },
] as const;

export function CampaignTabs({ book, id, current }: { book: string; id: string; current: (typeof tabs)[number]['key'] }) {
  return (
    <nav aria-label="Campaign" class="tabs">
      <ul>
        {tabs.map((t) => (
          <li>
            <a href={`/app/books/${book}/campaigns/${id}${t.path}`} aria-current={t.key === current ? 'page' : undefined}>
              {t.name}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
