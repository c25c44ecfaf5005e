// The Campaigns add-on's states, as people read them.
import { api, ok, type Schemas } from '../api/client';
import { useResource } from './useResource';

export const addonNames: Record<Schemas['Team']['campaign_addon'], string> = { none: 'Not active', trial: 'Trial', active: 'Active', canceled: 'Canceled' };

/**
 * useCampaignsEnabled tells whether a team's add-on opens the campaign
 * features (a trial or the paid add-on), as the API decides it: null while
 * the team is loading, and false when it cannot be read, so that a screen
 * asks for campaign data only when the answer will not be ADDON_REQUIRED.
 */
export function useCampaignsEnabled(teamId: string): boolean | null {
  const r = useResource((signal) => ok(api.GET('/api/teams/{team_id}', { params: { path: { team_id: teamId } }, signal })).then((a) => a.data.campaign_addon), [teamId]);
  if (r.error) return false;
  return r.data === null ? null : r.data === 'trial' || r.data === 'active';
}
