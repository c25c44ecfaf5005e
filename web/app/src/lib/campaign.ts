// How campaigns and their steps read to people.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, errorText, inBook, ok, type Schemas } from '../api/client';

export const campaignStates: Record<Schemas['CampaignStatus'], string> = { draft: 'Draft', active: 'Running', paused: 'Paused', archived: 'Archived' };

/** schedule says when a step runs, relative to the previous one. */
export function schedule(s: Pick<Schemas['Step'], 'schedule_type' | 'delay_days' | 'delay_hours' | 'fixed_date'>): string {
  switch (s.schedule_type) {
    case 'immediate':
      return 'Right after the previous step';
    case 'delay':
      return `${s.delay_days} day${s.delay_days === 1 ? '' : 's'}${s.delay_hours ? ` ${s.delay_hours} hour${s.delay_hours === 1 ? '' : 's'}` : ''} after the previous step`;
    default:
      return `On ${s.fixed_date}`;
  }
}

/** useCampaign loads a campaign (its name for a screen's title). */
export function useCampaign(bookId: string, id: string) {
  const [campaign, setCampaign] = useState<Schemas['CampaignDetail'] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    let current = true;
    ok(api.GET('/api/campaigns/{id}', { params: { header: inBook(bookId), path: { id } } }))
      .then((r) => current && setCampaign(r.data))
      .catch((e) => current && setError(e instanceof ApiError && e.status === 404 ? 'This campaign does not exist (any more).' : errorText(e)));
    return () => {
      current = false;
    };
  }, [bookId, id]);
  return { campaign, error };
}
