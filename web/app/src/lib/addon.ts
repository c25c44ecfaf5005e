// The Campaigns add-on's states, as people read them.
import type { Schemas } from '../api/client';

export const addonNames: Record<Schemas['Team']['campaign_addon'], string> = { none: 'Not active', trial: 'Trial', active: 'Active', canceled: 'Canceled' };
