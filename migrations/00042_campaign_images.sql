-- Campaign images live in the database, so that every instance serves
-- every image (emails already sent point at /images/{name} on whichever
-- instance the load balancer picks). Files under IMAGES_DIR from before
-- are copied in at start-up and by `contactbook images import`.
-- +goose Up
CREATE TABLE campaign_images (
    name         text PRIMARY KEY CHECK (name ~ '^[0-9a-f]{32}\.(jpg|png|gif|webp)$'),
    -- The book it was uploaded in; NULL for files imported from IMAGES_DIR
    -- (they never recorded one) and once the book is deleted: emails sent
    -- before still show the image.
    book_id      uuid REFERENCES books (id) ON DELETE SET NULL,
    content_type text NOT NULL CHECK (content_type IN ('image/jpeg', 'image/png', 'image/gif', 'image/webp')),
    data         bytea NOT NULL CHECK (octet_length(data) BETWEEN 1 AND 5242880),
    created_at   timestamptz NOT NULL DEFAULT now()
);
-- Images are compressed formats already: store them out of line without
-- TOAST's compression attempt.
ALTER TABLE campaign_images ALTER COLUMN data SET STORAGE EXTERNAL;
CREATE INDEX campaign_images_book_idx ON campaign_images (book_id);

-- +goose Down
DROP TABLE campaign_images;
