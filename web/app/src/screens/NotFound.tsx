import { Page } from '../ui/Page';

export default function NotFound() {
  return (
    <Page title="Page not found">
      <p>
        There is nothing at this address. <a href="/app/">Go to your contacts</a>.
      </p>
    </Page>
  );
}
