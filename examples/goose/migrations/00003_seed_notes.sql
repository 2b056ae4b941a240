-- +goose Up
INSERT INTO goose_notes (body, pinned) VALUES
	('migrations are embedded with embed.FS', 1),
	('goose.DialectTurso works with the libsql driver', 0);

-- +goose Down
DELETE FROM goose_notes;
