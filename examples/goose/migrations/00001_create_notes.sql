-- +goose Up
CREATE TABLE goose_notes (
	id   INTEGER PRIMARY KEY,
	body TEXT NOT NULL
);

-- +goose Down
DROP TABLE goose_notes;
