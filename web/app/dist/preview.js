// The template editor's preview frame. The dashboard's own policy forbids
// inline styles and outside images, which email HTML is made of, so the
// email is shown here instead: this page is served with a policy of its
// own (styles inline, images from anywhere, no script but this file), and
// the email goes into a sandboxed frame (no script, no forms, an opaque
// origin) that inherits it. Only the dashboard itself (same origin) may
// send the HTML.
const frame = document.querySelector('iframe');
addEventListener('message', (e) => {
  if (e.origin !== location.origin || typeof e.data?.html !== 'string') return;
  frame.srcdoc = e.data.html;
});
parent.postMessage({ previewReady: true }, location.origin);
