"""The SQLite schema shared with the Go store (hostfuncs/store/sqlite)."""

# Generated from hostfuncs/store/sqlite/migrations.go (version 1); tests/test_store.py
# checks that it still matches the Go store's SQL byte for byte.
_BATCH_BODY_NEW = (
    "CASE WHEN substr(new.content, 1, 1) = '{' OR substr(new.content, 1, 7) = '[depth:'\n"
    '\tTHEN substr(new.content, instr(new.content, char(10)) + 1)\n'
    '\tELSE new.content END'
)

_MIGRATION_1_SQL = (
    (
        '\n'
        'CREATE TABLE messages (\n'
        '\tid              TEXT PRIMARY KEY,\n'
        '\tconversation_id TEXT NOT NULL,\n'
        '\tseq             INTEGER NOT NULL,\n'
        '\trole            TEXT NOT NULL,\n'
        '\tcontent         TEXT NOT NULL,\n'
        '\tcreated_at      TEXT NOT NULL,\n'
        '\traw             TEXT NOT NULL,\n'
        '\tUNIQUE (conversation_id, seq)\n'
        ');\n'
        '\n'
        'CREATE TABLE recall (\n'
        '\tpos             INTEGER PRIMARY KEY,\n'
        '\tid              TEXT NOT NULL UNIQUE,\n'
        '\tconversation_id TEXT NOT NULL,\n'
        '\tseq             INTEGER NOT NULL,\n'
        '\trole            TEXT NOT NULL,\n'
        '\tcontent         TEXT NOT NULL,\n'
        '\tcreated_at      TEXT NOT NULL,\n'
        '\traw             TEXT NOT NULL,\n'
        '\tremoved_at      TEXT NOT NULL,\n'
        '\toperation_id    TEXT NOT NULL\n'
        ');\n'
        'CREATE INDEX recall_by_conversation ON recall (conversation_id, seq);\n'
        '\n'
        'CREATE TABLE blocks (\n'
        '\tpos             INTEGER PRIMARY KEY,\n'
        '\tid              TEXT NOT NULL UNIQUE,\n'
        '\ttier            TEXT NOT NULL,\n'
        '\tlabel           TEXT NOT NULL,\n'
        '\tcontent         TEXT NOT NULL,\n'
        '\tcreated_at      TEXT NOT NULL,\n'
        '\tconversation_id TEXT,\n'
        "\treason          TEXT NOT NULL DEFAULT '',\n"
        '\toperation_id    TEXT\n'
        ');\n'
        'CREATE INDEX blocks_by_label ON blocks (tier, label);\n'
        'CREATE INDEX blocks_by_conversation ON blocks (conversation_id);\n'
        '\n'
        "CREATE VIRTUAL TABLE blocks_fts USING fts5(label, body, tokenize = 'porter unicode61 remove_diacritics 2');\n"
        'CREATE TRIGGER blocks_fts_insert AFTER INSERT ON blocks BEGIN\n'
        '\tINSERT INTO blocks_fts (rowid, label, body) VALUES (new.pos, new.label, '
    )
    + _BATCH_BODY_NEW
    +     (
        ');\n'
        'END;\n'
        'CREATE TRIGGER blocks_fts_delete AFTER DELETE ON blocks BEGIN\n'
        '\tDELETE FROM blocks_fts WHERE rowid = old.pos;\n'
        'END;\n'
        'CREATE TRIGGER blocks_fts_update AFTER UPDATE OF pos, label, content ON blocks BEGIN\n'
        '\tDELETE FROM blocks_fts WHERE rowid = old.pos;\n'
        '\tINSERT INTO blocks_fts (rowid, label, body) VALUES (new.pos, new.label, '
    )
    + _BATCH_BODY_NEW
    +     (
        ');\n'
        'END;\n'
        '\n'
        "CREATE VIRTUAL TABLE recall_fts USING fts5(content, tokenize = 'porter unicode61 remove_diacritics 2');\n"
        'CREATE TRIGGER recall_fts_insert AFTER INSERT ON recall BEGIN\n'
        '\tINSERT INTO recall_fts (rowid, content) VALUES (new.pos, new.content);\n'
        'END;\n'
        'CREATE TRIGGER recall_fts_delete AFTER DELETE ON recall BEGIN\n'
        '\tDELETE FROM recall_fts WHERE rowid = old.pos;\n'
        'END;\n'
        'CREATE TRIGGER recall_fts_update AFTER UPDATE OF pos, content ON recall BEGIN\n'
        '\tDELETE FROM recall_fts WHERE rowid = old.pos;\n'
        '\tINSERT INTO recall_fts (rowid, content) VALUES (new.pos, new.content);\n'
        'END;\n'
    )
)

MIGRATIONS = [(1, 'messages, recall, blocks and their full-text indexes', _MIGRATION_1_SQL)]
