-- Step 5 of the commit (SCHEMA.md): the archive_deletes. ?1: JSON array of
-- block ids (the plan's "delete_ids"). The Go, Python and Node stores run
-- this file.
DELETE FROM blocks WHERE id IN (SELECT value FROM json_each(?1))
