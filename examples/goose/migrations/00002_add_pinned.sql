-- +goose Up
ALTER TABLE goose_notes ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
CREATE INDEX goose_notes_pinned ON goose_notes (pinned);

-- +goose Down
DROP INDEX goose_notes_pinned;
ALTER TABLE goose_notes DROP COLUMN pinned;
