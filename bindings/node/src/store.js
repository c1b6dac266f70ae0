/**
 * The stores: SQLiteStore (a file or ":memory:") and MemoryStore (the same
 * store on ":memory:"). See sqlite.js.
 * @module
 */
export {
  SQLiteStore, MemoryStore, MEMORY_PATH, BUSY_TIMEOUT_MS, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT,
} from './sqlite.js';
