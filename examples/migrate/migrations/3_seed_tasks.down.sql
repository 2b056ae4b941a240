DELETE FROM migrate_tasks;
