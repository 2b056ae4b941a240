INSERT INTO migrate_tasks (title, done, due) VALUES
	('write the migrations', 1, '2025-01-31 12:00:00'),
	('run them with golang-migrate', 0, '2025-02-28 12:00:00');
