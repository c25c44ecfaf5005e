// SendingSetup tells the campaign screens what the book's email settings
// still lack before campaign email can go out: the required items of the
// server's setup checklist (whatever the provider), with a link to the
// settings. Nothing shows once the book is ready, or to a role that cannot
// read the settings.
import { api, inBook, ok, type Schemas } from '../api/client';
import { useResource } from '../lib/useResource';

export function SendingSetup({ bookId }: { bookId: string }) {
  const r = useResource(
    (signal) =>
      ok(api.GET('/api/campaign-settings', { params: { header: inBook(bookId) }, signal })).then((x) => {
        const s = x.data as Schemas['EmailSettings'] | Schemas['EmailSettingsUnconfigured'];
        return 'id' in s ? s : null;
      }),
    [bookId],
    { describe: () => '' },
  );
  if (r.loading || r.failure) return null;
  const s = r.data;
  if (s?.ready) return null;
  const missing = s ? s.checklist.filter((i) => i.required && !i.done) : null;
  return (
    <section aria-labelledby="sending-setup" class="checklist">
      <h2 id="sending-setup">Sending is not set up</h2>
      <p>Campaign email of this book cannot go out yet.</p>
      <ul>
        {missing ? (
          missing.map((i) => (
            <li class="todo">
              <span aria-hidden="true">○</span> <strong>{i.title}</strong>
              <span class="visually-hidden">: to do.</span> {i.detail}
            </li>
          ))
        ) : (
          <li class="todo">
            <span aria-hidden="true">○</span> <strong>Email settings saved</strong>
            <span class="visually-hidden">: to do.</span> Choose a sending provider and a sender.
          </li>
        )}
      </ul>
      <p>
        <a href={`/app/books/${bookId}/settings`}>Open the email settings</a>
      </p>
    </section>
  );
}
