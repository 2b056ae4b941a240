ALTER TABLE migrate_tasks ADD COLUMN due DATETIME;
CREATE INDEX migrate_tasks_due ON migrate_tasks (due);
