import { describe, expect, test } from 'vitest';
import { ApiError } from '../../src/api/client';
import { checkDate, checkEmail, checkPassword, checkPhone, checkURL, collect, fieldOf, keyFromName, placeError } from '../../src/lib/form';

describe('placing API errors at fields', () => {
  test('the field the message quotes', () => {
    expect(fieldOf('`emails[1].address` repeats `emails[0].address`; list each address once.')).toBe('emails[1].address');
    expect(fieldOf('`website` must be a valid http(s) URL.')).toBe('website');
    expect(fieldOf('A contact needs at least one of first_name, last_name or company.')).toBeNull();
  });

  test('a known field gets the message, anything else goes to the form', () => {
    const e = new ApiError(400, 'INVALID_INPUT', '`website` must be a valid http(s) URL.');
    expect(placeError(e, ['website'])).toEqual({ fields: { website: 'website must be a valid http(s) URL.' }, form: '' });
    expect(placeError(e, ['name'])).toEqual({ fields: {}, form: '`website` must be a valid http(s) URL.' });
    expect(placeError(new TypeError('Failed to fetch'), []).form).toMatch(/could not be reached/);
  });

  test('field details of the answer place every refused field at once', () => {
    const e = new ApiError(400, 'VALIDATION_ERROR', 'Two fields are invalid.', [
      { field: 'emails[1].address', message: 'Enter a valid email address.' },
      { field: 'website', message: '`website` must be a valid http(s) URL.' },
    ]);
    expect(placeError(e, ['emails[1].address', 'website'])).toEqual({
      fields: { 'emails[1].address': 'Enter a valid email address.', website: 'website must be a valid http(s) URL.' },
      form: '',
    });
    // A detail the form has no field for keeps the whole sentence above the buttons.
    expect(placeError(e, ['website'])).toEqual({ fields: { website: 'website must be a valid http(s) URL.' }, form: 'Two fields are invalid.' });
    // None placeable: as without details.
    expect(placeError(e, ['name'])).toEqual({ fields: {}, form: 'Two fields are invalid.' });
  });
});

describe('client checks', () => {
  test('email', () => {
    expect(checkEmail('')).toMatch(/Enter/);
    expect(checkEmail('ann@')).toMatch(/like/);
    expect(checkEmail(' ann@example.com ')).toBe('');
  });
  test('password counts characters, not bytes', () => {
    expect(checkPassword('1234567')).toMatch(/at least 8/);
    expect(checkPassword('ü'.repeat(72))).toBe('');
    expect(checkPassword('a'.repeat(73))).toMatch(/at most 72/);
  });
  test('url, date, phone', () => {
    expect(checkURL('')).toBe('');
    expect(checkURL('https://a.example')).toBe('');
    expect(checkURL('javascript:alert(1)')).not.toBe('');
    expect(checkDate('2024-02-29')).toBe('');
    expect(checkDate('29.02.2024')).not.toBe('');
    expect(checkPhone('+34 (600) 123-456 x12')).toBe('');
    expect(checkPhone('call me')).not.toBe('');
  });
  test('collect keeps only failures', () => {
    expect(collect({ a: '', b: 'bad' })).toEqual({ b: 'bad' });
  });
});

test('a field key suggested from its name', () => {
  expect(keyFromName('Customer tier')).toBe('customer_tier');
  expect(keyFromName('2nd Größe!')).toBe('nd_gro_e');
  expect(keyFromName('Ünïcode Näme')).toBe('unicode_name');
});
