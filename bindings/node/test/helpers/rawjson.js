/**
 * The exact source bytes of JSON values, so tests compare what the
 * plug-in returned byte for byte (as Go's json.RawMessage does) instead of
 * a re-serialization. The positions come from jsonc-parser's parseTree (a
 * well-kept parser: VS Code's), on text JSON.parse has validated.
 */
import { findNodeAtLocation, parseTree } from 'jsonc-parser';

/**
 * @param {string} text
 * @returns {import('jsonc-parser').Node}
 */
export function tree(text) {
  JSON.parse(text); // strict JSON only (jsonc-parser also reads comments)
  const root = parseTree(text, undefined, { disallowComments: true });
  if (!root) throw new Error('not JSON');
  return root;
}

/**
 * The source text of the value at `path` (keys and indexes), or undefined.
 * @param {string} text
 * @param {import('jsonc-parser').Node} root
 * @param {(string | number)[]} path
 */
export function rawAt(text, root, path) {
  const n = findNodeAtLocation(root, path);
  return n ? text.slice(n.offset, n.offset + n.length) : undefined;
}

/**
 * The exact source text of each element of the array at `key` of the
 * top-level object in text.
 * @param {string} text
 * @param {string} key
 * @returns {string[]}
 */
export function rawArrayItems(text, key) {
  const arr = findNodeAtLocation(tree(text), [key]);
  if (!arr || arr.type !== 'array') throw new Error(`no array ${key}`);
  return (arr.children ?? []).map((n) => text.slice(n.offset, n.offset + n.length));
}
