import { describe, expect, test } from 'vitest';
import { fieldChoices, filterRule, fromRule, newCondition, toRule, type Rule } from '../../src/lib/segmentRule';

const choices = fieldChoices([{ key: 'score', name: 'Score', type: 'number' }], true);

describe('segment rules in the builder', () => {
  test('a saved rule survives the round trip through the builder', () => {
    const rule: Rule = {
      all: [
        { field: 'company', op: 'contains', value: 'acme' },
        { field: 'labels', op: 'has_any', value: ['c4a1e7b2-5d3f-4a69-8e0b-2f7c9d1a6b38'] },
        { field: 'email.opened', op: 'within_last_days', value: 30, campaign_id: '6c1e3a5b-7d9f-4b2c-9e4a-0f1b2d3c4e5a' },
        { not: { any: [{ field: 'email.clicked', op: 'ever' }] } },
        { any: [{ field: 'custom.score', op: 'gt', value: 4.5 }, { field: 'starred', op: 'eq', value: false }] },
        { field: 'event', name: 'order.paid', op: 'within_last_days', value: 30 },
        { field: 'event', name: 'trial.started', op: 'never' },
      ],
    };
    expect(toRule(fromRule(rule), choices)).toEqual(rule);
  });

  test('a lone condition becomes a group of one', () => {
    const g = fromRule({ field: 'company', op: 'is_set' });
    expect(g.match).toBe('all');
    expect(toRule(g, choices)).toEqual({ all: [{ field: 'company', op: 'is_set' }] });
  });

  test('a new condition has the first op of its field', () => {
    expect(newCondition(choices.find((c) => c.field === 'email.opened'))).toMatchObject({ field: 'email.opened', op: 'within_last_days' });
  });

  test('the contacts filters as a rule', () => {
    expect(filterRule({ q: 'ann', label: 'L', starred: 'true' })).toEqual({
      all: [
        { any: ['first_name', 'last_name', 'company', 'email'].map((field) => ({ field, op: 'contains', value: 'ann' })) },
        { field: 'labels', op: 'has_any', value: ['L'] },
        { field: 'starred', op: 'eq', value: true },
      ],
    });
  });
});
