-- +goose Up
-- A label's sort_order is 0..1,000,000, so that appending after the last
-- label (max + 1) can never overflow an integer. Values set before the
-- bound are brought into it; their order among each other is kept where it
-- can be, and ties sort by name.
UPDATE labels SET sort_order = LEAST(GREATEST(sort_order, 0), 1000000)
WHERE sort_order NOT BETWEEN 0 AND 1000000;
ALTER TABLE labels ADD CONSTRAINT labels_sort_order_range CHECK (sort_order BETWEEN 0 AND 1000000);

-- +goose Down
ALTER TABLE labels DROP CONSTRAINT labels_sort_order_range;
