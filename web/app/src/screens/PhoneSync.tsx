// "Sync with your phone": what a phone or desktop address book needs to
// sync the book over CardDAV (the server address, the username, an app
// password made here) and short steps for iOS and macOS, Android with
// DAVx5, and Thunderbird. Every role may sync; a viewer's address book is
// read-only on the device.
import { atLeast } from '../lib/roles';
import { useBook } from '../lib/useBook';
import { useWorkspace } from '../lib/workspace';
import { CopyField } from '../ui/CopyField';
import { BookMissing, Page } from '../ui/Page';
import { NewAppPassword } from './AppPasswords';

export default function PhoneSync({ book: bookId }: { book: string }) {
  const w = useWorkspace();
  const { book, booksLoaded } = useBook(bookId);
  if (!book) return <Page title="Sync with your phone"><BookMissing loaded={booksLoaded} /></Page>;
  const server = `${location.origin}/dav/`;
  const bookURL = `${location.origin}/dav/${w.user.id}/books/${book.id}/`;
  return (
    <Page title="Sync with your phone">
      <p>
        Your phone, your computer's Contacts and Thunderbird can keep “{book.name}” in their address book, both ways: what you change there
        shows here and the other way round. {atLeast(w.role, 'member') ? '' : 'As a viewer of this team you can read the book there, not change it.'}
      </p>
      <section aria-labelledby="sync-account">
        <h2 id="sync-account">Account settings</h2>
        <CopyField label="Server address" value={server} button="Copy server address" hint="Most apps find your address books from this address." />
        <CopyField label="Username" value={w.user.email} button="Copy username" />
        <CopyField label="Address book URL" value={bookURL} button="Copy address book URL" hint="For apps that ask for one address book's URL." />
        <h3>Password</h3>
        <p>Use an app password, not your account password. Create one for each device; you can revoke it under App passwords in the account menu.</p>
        <NewAppPassword />
      </section>
      <section aria-labelledby="sync-steps">
        <h2 id="sync-steps">Steps</h2>
        <h3>iPhone, iPad and Mac</h3>
        <ol>
          <li>iPhone or iPad: Settings › Contacts › Accounts › Add Account › Other › Add CardDAV Account. Mac: System Settings › Internet Accounts › Add Other Account › CardDAV account (account type Manual).</li>
          <li>Server: <code>{location.host}</code>, User Name: your email, Password: the app password.</li>
          <li>Save. Your books appear as groups of the account in Contacts.</li>
        </ol>
        <h3>Android (DAVx5)</h3>
        <ol>
          <li>Install DAVx5, tap + and choose “Login with URL and user name”.</li>
          <li>Base URL: <code>{server}</code>, User name: your email, Password: the app password.</li>
          <li>Pick the address books to sync; they appear in your phone's Contacts app.</li>
        </ol>
        <h3>Thunderbird</h3>
        <ol>
          <li>Address Book › New Address Book › Add CardDAV Address Book.</li>
          <li>Username: your email, Location: <code>{server}</code>; enter the app password when asked.</li>
          <li>Choose the address books to add.</li>
        </ol>
      </section>
    </Page>
  );
}
