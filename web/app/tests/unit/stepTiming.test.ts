import { describe, expect, test } from 'vitest';
import type { Schemas } from '../../src/api/client';
import { timingBody, timingForm } from '../../src/ui/StepTiming';

describe("a step's A/B subjects through the editor", () => {
  const step = {
    variants: [
      { id: 'a', subject: 'Plain', email_template_id: null },
      { id: 'b', subject: 'Fancy', email_template_id: 't2' },
    ],
  } as unknown as Schemas['Step'];

  test("each subject's template comes back as it was: its own, or null for the step's", () => {
    const body = timingBody(timingForm(step), true, false);
    expect(body.variants).toEqual([
      { id: 'a', subject: 'Plain', email_template_id: null },
      { id: 'b', subject: 'Fancy', email_template_id: 't2' },
    ]);
  });

  test('a template chosen in the editor is sent, the first option is the step’s', () => {
    const v = timingForm(step);
    v.variants = [{ ...v.variants[0], email_template_id: 't3' }, { ...v.variants[1], email_template_id: '' }, { subject: ' New ', email_template_id: '' }];
    expect(timingBody(v, true, false).variants).toEqual([
      { id: 'a', subject: 'Plain', email_template_id: 't3' },
      { id: 'b', subject: 'Fancy', email_template_id: null },
      { id: null, subject: 'New', email_template_id: null },
    ]);
  });
});
