-- Seeds a book with contacts for load tests, in one statement.
--   psql "$DATABASE_URL" -v book_id=<uuid> [-v count=100000] -f scripts/bench/seed.sql
-- Contact g is "<first> Person<g>" of "Company <g % 1000>" with one work
-- email (user<g>@example.com) and one mobile phone, created g minutes after
-- 2025-01-01, starred when g is divisible by 10. Keep in step with
-- seedBenchSQL in internal/httpapi/contacts_bench_test.go.
\set ON_ERROR_STOP on
\if :{?count}
\else
\set count 100000
\endif
INSERT INTO contacts (book_id, first_name, last_name, company, job_title, emails, phones, starred, created_at, updated_at)
SELECT :'book_id'::uuid,
       (ARRAY['Ada','Grace','Alan','Edsger','Barbara','Donald','Ken','Dennis','Margaret','Linus'])[1 + g % 10],
       'Person' || g, 'Company ' || (g % 1000), 'Engineer',
       jsonb_build_array(jsonb_build_object('address', 'user' || g || '@example.com', 'label', 'work', 'primary', true)),
       jsonb_build_array(jsonb_build_object('number', '+1 555 ' || lpad((g % 10000)::text, 4, '0'), 'label', 'mobile', 'primary', true)),
       g % 10 = 0,
       timestamptz '2025-01-01' + g * interval '1 minute',
       timestamptz '2025-01-01' + g * interval '1 minute'
FROM generate_series(1, :count) g;
ANALYZE contacts;
