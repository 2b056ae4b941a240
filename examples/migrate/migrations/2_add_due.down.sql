DROP INDEX migrate_tasks_due;
ALTER TABLE migrate_tasks DROP COLUMN due;
