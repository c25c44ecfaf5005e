// The dialog that creates a book or edits one (name, colour, icon, unique
// emails): the books screen's, and the first book's from a section of the
// navigation opened while the team has none.
import { api, ok, type Book } from '../api/client';
import { bookIcons, checkColor } from '../lib/books';
import { checkRequired } from '../lib/form';
import { useForm } from '../lib/useForm';
import { useWorkspace } from '../lib/workspace';
import { Field } from './Field';
import { FormDialog } from './FormDialog';

export function BookDialog({ book, onClose, onSaved }: { book: Book | null; onClose: () => void; onSaved: (b: Book, created: boolean) => void }) {
  const w = useWorkspace();
  const f = useForm({
    name: book?.name ?? '',
    color: book?.color ?? '#4F46E5',
    icon: book?.icon ?? 'book',
    enforce_unique_emails: book?.enforce_unique_emails ?? false,
  });
  return (
    <FormDialog
      title={book ? `Edit ${book.name}` : 'New book'}
      submit={book ? 'Save book' : 'Create book'}
      form={f}
      checks={() => ({ name: checkRequired(f.values.name, 'a name'), color: checkColor(f.values.color) })}
      send={async () => {
        const r = book
          ? await ok(api.PATCH('/api/books/{id}', { params: { path: { id: book.id } }, body: f.values }))
          : await ok(api.POST('/api/books', { body: { ...f.values, team_id: w.team.id } }));
        onSaved(r.data, !book);
      }}
      onClose={onClose}
    >
      <Field label="Name" required {...f.bind('name')} />
      <div class="row">
        <Field label="Colour" type="color" {...f.bind('color')} onInput={(e) => f.set('color', (e.target as HTMLInputElement).value.toUpperCase())} />
        <Field label="Icon" as="select" value={f.values.icon} onChange={(e) => f.set('icon', (e.target as HTMLSelectElement).value)}>
          {Object.entries(bookIcons).map(([id, i]) => (
            <option value={id}>
              {i.glyph} {i.name}
            </option>
          ))}
        </Field>
      </div>
      <Field
        label="Each email address only once in this book"
        type="checkbox"
        checked={f.values.enforce_unique_emails}
        onChange={(e) => f.set('enforce_unique_emails', (e.target as HTMLInputElement).checked)}
        hint="A second contact with an address already in the book is refused."
      />
    </FormDialog>
  );
}
