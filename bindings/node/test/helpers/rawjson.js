/**
 * A JSON scanner that keeps source positions, so tests can compare the
 * exact bytes of a value (as Go's json.RawMessage does) instead of a
 * re-serialization.
 */

/**
 * @typedef {{start: number, end: number, kind: 'object', entries: [string, RawNode][]}
 *   | {start: number, end: number, kind: 'array', items: RawNode[]}
 *   | {start: number, end: number, kind: 'scalar'}} RawNode
 */

/**
 * Parses text (validated by JSON.parse first) into a span tree.
 * @param {string} text
 * @returns {RawNode}
 */
export function scan(text) {
  JSON.parse(text);
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++; };
  const str = () => {
    const start = i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i));
  };
  /** @returns {RawNode} */
  const value = () => {
    ws();
    const start = i;
    const c = text[i];
    if (c === '{') {
      i++;
      /** @type {[string, RawNode][]} */
      const entries = [];
      ws();
      if (text[i] === '}') { i++; return { start, end: i, kind: 'object', entries }; }
      for (;;) {
        ws();
        const k = str();
        ws(); i++; // :
        entries.push([k, value()]);
        ws();
        if (text[i++] === '}') return { start, end: i, kind: 'object', entries };
      }
    }
    if (c === '[') {
      i++;
      /** @type {RawNode[]} */
      const items = [];
      ws();
      if (text[i] === ']') { i++; return { start, end: i, kind: 'array', items }; }
      for (;;) {
        items.push(value());
        ws();
        if (text[i++] === ']') return { start, end: i, kind: 'array', items };
      }
    }
    if (c === '"') { str(); return { start, end: i, kind: 'scalar' }; }
    while (i < text.length && !',]} \t\n\r'.includes(text[i])) i++;
    return { start, end: i, kind: 'scalar' };
  };
  const root = value();
  return root;
}

/**
 * The member of an object node (the last one, as JSON.parse keeps).
 * @param {RawNode} node
 * @param {string} key
 * @returns {RawNode | undefined}
 */
export function member(node, key) {
  if (node.kind !== 'object') return undefined;
  let found;
  for (const [k, v] of node.entries) if (k === key) found = v;
  return found;
}

/**
 * The exact source text of each element of the array at `key` of the
 * top-level object in text.
 * @param {string} text
 * @param {string} key
 * @returns {string[]}
 */
export function rawArrayItems(text, key) {
  const arr = member(scan(text), key);
  if (!arr || arr.kind !== 'array') throw new Error(`no array ${key}`);
  return arr.items.map((n) => text.slice(n.start, n.end));
}
