/**
 * Redaction of the secrets a URL may carry, before the URL is printed (in
 * an error, a warning or a log line): the Node host's one place for it,
 * with the rules of the Go host's internal/redact
 * (testdata/redact/vectors.json holds the cases both pass).
 *
 * Hidden: the userinfo's password; in an http(s) or ws(s) URL a user name
 * that stands alone (`https://TOKEN@host`); and the value of every query
 * or fragment parameter whose name, lower-cased without `-`, `_`, `.` and
 * spaces, ends in one of SECRET_SUFFIXES. Everything else is kept as it is.
 * @module
 */

export const MASK = 'xxxxx';

export const SECRET_SUFFIXES = Object.freeze(['key', 'token', 'secret', 'password', 'passwd', 'pwd', 'pass',
  'sig', 'signature', 'credential', 'credentials', 'auth', 'authorization']);

const WEB_SCHEMES = new Set(['http', 'https', 'ws', 'wss']);
const SCHEME_CHAR = /[A-Za-z0-9+.-]/;
// eslint-disable-next-line no-control-regex
const URL_END = /[\x00-\x20"'<>`\\\x7f]/;
const TRAILING = '.,;:!?)]}';

/**
 * `text` with every URL in it (`scheme://…`) redacted; a URL alone is
 * text too.
 * @param {string} text
 * @returns {string}
 */
export function redact(text) {
  if (!text.includes('://')) return text;
  let out = '';
  let rest = text;
  for (;;) {
    const i = rest.indexOf('://');
    if (i < 0) return out + rest;
    let start = i;
    while (start > 0 && SCHEME_CHAR.test(rest[start - 1])) start--;
    let end = i + 3;
    while (end < rest.length && !URL_END.test(rest[end])) end++;
    while (end > i + 3 && TRAILING.includes(rest[end - 1])) end--;
    out += rest.slice(0, start);
    if (start === i) { // "://" without a scheme: not a URL
      out += '://';
      rest = rest.slice(i + 3);
      continue;
    }
    out += redactURL(rest.slice(start, end));
    rest = rest.slice(end);
  }
}

/** @param {string} u a "scheme://…" string */
function redactURL(u) {
  const i = u.indexOf('://');
  const head = u.slice(0, i + 3);
  const rest = u.slice(i + 3);
  let authEnd = rest.search(/[/?#]/);
  if (authEnd < 0) authEnd = rest.length;
  let auth = rest.slice(0, authEnd);
  let tail = rest.slice(authEnd);
  const at = auth.lastIndexOf('@');
  if (at >= 0) {
    const colon = auth.slice(0, at).indexOf(':');
    if (colon >= 0) auth = `${auth.slice(0, colon)}:${MASK}${auth.slice(at)}`;
    else if (WEB_SCHEMES.has(head.slice(0, i).toLowerCase())) auth = MASK + auth.slice(at);
  }
  const q = tail.search(/[?#]/);
  if (q >= 0) tail = tail.slice(0, q + 1) + tail.slice(q + 1).split(/([&;#])/).map(param).join('');
  return head + auth + tail;
}

/** @param {string} p "name=value", or a separator */
function param(p) {
  const eq = p.indexOf('=');
  if (eq < 0 || eq === p.length - 1 || !secretName(p.slice(0, eq))) return p;
  return `${p.slice(0, eq)}=${MASK}`;
}

/** @param {string} name */
function secretName(name) {
  let n = name;
  try { n = decodeURIComponent(name.replace(/\+/g, ' ')); } catch { /* kept as written */ }
  n = n.toLowerCase().replace(/[-_. ]/g, '');
  return SECRET_SUFFIXES.some((s) => n.endsWith(s));
}
