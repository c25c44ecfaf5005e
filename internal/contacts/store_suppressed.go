package contacts

// A contact is suppressed once every address it holds is (package
// suppression keeps the list and says which address is). The mark,
// suppressed_at, is written by the statement that adds or lifts a
// suppression, in the same statement, so the list and the marks never
// disagree; these fragments are that statement's part over contacts.

// MarkSuppressedSQL is the data-modifying statement, for a WITH of the
// statement that suppresses addresses of a book, that marks suppressed
// the book's contacts holding one of them whose other addresses are all
// suppressed too, returning 1 per contact marked. book, now and
// addresses are SQL expressions (the book's id, the time of the mark, the
// lower-cased addresses as text[]); suppressed gives the SQL test of
// whether the address (an SQL expression) is suppressed already.
func MarkSuppressedSQL(book, now, addresses string, suppressed func(address string) string) string {
	return `UPDATE contacts ct SET suppressed_at = ` + now + `
			WHERE ct.book_id = ` + book + ` AND ct.suppressed_at IS NULL
			  AND ct.id IN (SELECT contact_id FROM contact_emails WHERE book_id = ` + book + ` AND address_lower = ANY(` + addresses + `))
			  AND NOT EXISTS (
				SELECT 1 FROM contact_emails ce
				WHERE ce.contact_id = ct.id AND ce.address_lower <> ALL(` + addresses + `)
				  AND NOT ` + suppressed("ce.address_lower") + `)
			RETURNING 1`
}

// UnmarkSuppressedSQL is the statement that clears the mark of the
// book's suppressed contacts holding an address a suppression no longer
// covers: they now hold one that is not suppressed. from is the SQL of
// what follows FROM (the lifted suppressions), book the SQL expression of
// the book's id in it and holds the SQL test of whether the address (an
// SQL expression, lower-cased) is the one lifted.
func UnmarkSuppressedSQL(from, book string, holds func(address string) string) string {
	return `UPDATE contacts ct SET suppressed_at = NULL
		FROM ` + from + `
		WHERE ct.book_id = ` + book + ` AND ct.suppressed_at IS NOT NULL
		  AND ct.id IN (SELECT contact_id FROM contact_emails ce WHERE ce.book_id = ` + book + ` AND ` + holds("ce.address_lower") + `)`
}

// RemarkSuppressedSQL is the statement that sets or clears the suppressed
// mark of one contact by the rule, after a write changed its addresses:
// marked when it holds at least one address and every one is suppressed,
// clear otherwise. Only a mark that disagrees with the rule is written,
// and then it flips. contact, book and now are SQL expressions (the
// contact's id, its book's id, the time of a mark); anyInForce is the SQL
// test, evaluated once, that the book has a suppression in force at all
// (without one no contact is marked and the statement ends there);
// suppressed gives the SQL test of whether the address (an SQL
// expression, lower-cased) is suppressed. One contact by its key, not an
// array of them: PostgreSQL then settles on the cached generic plan, where
// an array kept it planning every call.
func RemarkSuppressedSQL(contact, book, now, anyInForce string, suppressed func(address string) string) string {
	return `
	UPDATE contacts ct SET suppressed_at = CASE WHEN ct.suppressed_at IS NULL THEN ` + now + ` END
	WHERE ` + anyInForce + `
	  AND ct.id = ` + contact + ` AND ct.book_id = ` + book + `
	  AND (ct.suppressed_at IS NOT NULL) <> (
		EXISTS (SELECT 1 FROM contact_emails ce WHERE ce.contact_id = ct.id)
		AND NOT EXISTS (
			SELECT 1 FROM contact_emails ce
			WHERE ce.contact_id = ct.id AND NOT ` + suppressed("ce.address_lower") + `))`
}
