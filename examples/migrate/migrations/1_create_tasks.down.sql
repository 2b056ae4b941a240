DROP TABLE migrate_tasks;
