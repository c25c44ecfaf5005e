// How campaigns and their steps read to people.
import { api, ApiError, errorText, inBook, ok, type Schemas } from '../api/client';
import { useResource } from './useResource';

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
  const r = useResource((signal) => ok(api.GET('/api/campaigns/{id}', { params: { header: inBook(bookId), path: { id } }, signal })).then((a) => a.data), [bookId, id], {
    describe: (e) => (e instanceof ApiError && e.status === 404 ? 'This campaign does not exist (any more).' : errorText(e)),
  });
  return { campaign: r.data, error: r.error };
}
