// The Campaigns add-on's states, as people read them.
import { useEffect, useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../api/client';

export const addonNames: Record<Schemas['Team']['campaign_addon'], string> = { none: 'Not active', trial: 'Trial', active: 'Active', canceled: 'Canceled' };

/**
 * useCampaignsEnabled tells whether a team's add-on opens the campaign
 * features (a trial or the paid add-on), as the API decides it: null while
 * the team is loading, and false when it cannot be read, so that a screen
 * asks for campaign data only when the answer will not be ADDON_REQUIRED.
 */
export function useCampaignsEnabled(teamId: string): boolean | null {
  const [enabled, setEnabled] = useState<boolean | null>(null);
  useEffect(() => {
    let current = true;
    setEnabled(null);
    ok(api.GET('/api/teams/{team_id}', { params: { path: { team_id: teamId } } }))
      .then((r) => current && setEnabled(r.data.campaign_addon === 'trial' || r.data.campaign_addon === 'active'))
      .catch(() => current && setEnabled(false));
    return () => {
      current = false;
    };
  }, [teamId]);
  return enabled;
}
