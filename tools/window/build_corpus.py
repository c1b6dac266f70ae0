#!/usr/bin/env python3
"""Builds testdata/tokens/<kind>/messages.jsonl, the token-estimate corpus.

Every piece is real, licensed public text found on a Debian machine or in a
registry package, or real command output produced on it (sources and
licenses: testdata/tokens/README.md). The corpus is committed; this script
records how it was made and is not run by the tests. Usage:

    build_corpus.py STAGING OUT

STAGING holds what the README lists, unpacked:
  x/gnome-user-docs/          dpkg-deb -x of Debian's gnome-user-docs (43.0-2)
  pypi/cc/chatterbot_corpus/  the chatterbot-corpus 1.3.3 wheel, unzipped
  npm/emojibase-data-17.0.0/  npm pack emojibase-data@17.0.0, unpacked
  x/manpages-{zh,ja,ru,el}/   dpkg-deb -x of Debian's translated manual pages
  out/                        command output captured on the machine
Catalogs (.mo) are read from /usr/share/locale, code from GOROOT, the
Python standard library and bindings/node/node_modules.

Messages are cut from each source at paragraph or line boundaries, with
sizes drawn (fixed seed) from the range each kind has in a conversation:
chat turns 20-400 characters, prose 150-2500, tool output 200-4000.
"""
import gettext
import glob
import html
import json
import os
import random
import re
import subprocess
import sys

STAGING, OUT = sys.argv[1], sys.argv[2]
HELP = os.path.join(STAGING, "x/gnome-user-docs/usr/share/help")
CHAT = os.path.join(STAGING, "pypi/cc/chatterbot_corpus/data")
rng = random.Random(20260228)


def help_paragraphs(lang, script=None):
    """Text of <title>, <desc> and <p> elements of GNOME Help in lang;
    with script, only paragraphs mostly written in it (untranslated
    strings stay English in a translated page)."""
    out = []
    for f in sorted(glob.glob(os.path.join(HELP, lang, "gnome-help", "*.page"))):
        s = open(f, encoding="utf-8").read()
        s = re.sub(r"<info>.*?</info>", "", s, flags=re.S)
        for m in re.finditer(r"<(p|title|desc)\b[^>]*>(.*?)</\1>", s, flags=re.S):
            t = html.unescape(re.sub(r"<[^>]+>", "", m.group(2)))
            t = re.sub(r"\s+", " ", t).strip()
            if len(t) < 20:
                continue
            if script and share(t, script) < 0.5:
                continue
            out.append(t)
    return out


def share(t, script):
    letters = [c for c in t if c.isalpha()]
    if not letters:
        return 0
    return sum(1 for c in letters if script(ord(c))) / len(letters)


def chat_lines(lang):
    """Utterances of chatterbot-corpus in lang, conversation by conversation."""
    convs = []
    for f in sorted(glob.glob(os.path.join(CHAT, lang, "*.yml"))):
        cur = None
        for line in open(f, encoding="utf-8"):
            m = re.match(r"^(- )?- (.*)$", line.rstrip("\n"))
            m2 = re.match(r"^  - (.*)$", line.rstrip("\n"))
            if m and line.startswith("- - "):
                cur = [m.group(2)]
                convs.append(cur)
            elif m2 and cur is not None:
                cur.append(m2.group(1))
            elif cur is not None and line.startswith("    ") and cur:
                cur[-1] += " " + line.strip()
    clean = []
    for c in convs:
        clean.append([u.strip().strip("'\"").replace("\\n", "\n") for u in c if u.strip()])
    return clean


def catalog(path, script):
    """Translated strings of a gettext catalog written mostly in script."""
    with open(path, "rb") as fh:
        cat = gettext.GNUTranslations(fh)._catalog
    out = []
    for k, v in cat.items():
        if not k or not isinstance(v, str):
            continue
        v = v.strip()
        if len(v) >= 15 and share(v, script) >= 0.6:
            out.append(v)
    return out


def pack(pieces, lo, hi, sep="\n\n", limit=None):
    """Groups consecutive pieces into messages of lo..hi characters."""
    msgs, cur, target = [], [], rng.randint(lo, hi)
    for p in pieces:
        if len(p) > hi:
            p = p[:hi]
        cur.append(p)
        if len(sep.join(cur)) >= target:
            msgs.append(sep.join(cur))
            cur, target = [], rng.randint(lo, hi)
    if cur and len(sep.join(cur)) >= lo // 2:
        msgs.append(sep.join(cur))
    return msgs[:limit] if limit else msgs


def chat_messages(lang, limit=None):
    turns = []
    for conv in chat_lines(lang):
        turns.extend(conv)
    return pack(turns, 20, 400, sep="\n", limit=limit)


def lines_messages(text, lo, hi, limit=None):
    return pack(text.splitlines(), lo, hi, sep="\n", limit=limit)


def man_pages(pkg, lang, script, chars):
    """Translated manual pages as a terminal shows them (man -l | col -b,
    80 columns), from the first pages of section 1 in name order, cut at
    line boundaries; only messages mostly in script."""
    out, n = [], 0
    env = dict(os.environ, MANWIDTH="80", LANG="C.UTF-8")
    for f in sorted(glob.glob(os.path.join(STAGING, "x", pkg, "usr/share/man", lang, "man1", "*.gz"))):
        text = subprocess.run(["sh", "-c", 'man -l "$1" 2>/dev/null | col -b', "sh", f], capture_output=True, text=True,
                              env=env).stdout
        for m in pack(text.splitlines(), 150, 1200, sep="\n"):
            if share(m, script) >= 0.5:
                out.append(m)
                n += len(m)
        if n >= chars:
            break
    return out


def budget(msgs, chars):
    """The first messages up to about chars characters."""
    out, n = [], 0
    for m in msgs:
        if n >= chars:
            break
        out.append(m)
        n += len(m)
    return out


def cjk(c): return 0x3400 <= c <= 0x9FFF or 0x3040 <= c <= 0x30FF or 0xAC00 <= c <= 0xD7AF
def hangul(c): return 0xAC00 <= c <= 0xD7AF or 0x1100 <= c <= 0x11FF or 0x3130 <= c <= 0x318F
def cyr(c): return 0x0400 <= c <= 0x04FF
def greek(c): return 0x0370 <= c <= 0x03FF or 0x1F00 <= c <= 0x1FFF
def hebrew(c): return 0x0590 <= c <= 0x05FF
def arabic(c): return 0x0600 <= c <= 0x06FF or 0x0750 <= c <= 0x077F
def deva(c): return 0x0900 <= c <= 0x097F
def thai(c): return 0x0E00 <= c <= 0x0E7F
def latin(c): return c < 0x250


kinds = {}
prose = lambda lang, script=None, chars=9000: budget(pack(help_paragraphs(lang, script), 150, 1000), chars)
cat = lambda lang, names, script, chars: budget(pack(sum((catalog("/usr/share/locale/%s/LC_MESSAGES/%s.mo" % (lang, n), script)
                                                    for n in names), []), 40, 600, sep="\n"), chars)
kinds["english-prose"] = budget(pack(help_paragraphs("C"), 150, 1200), 30000)
kinds["english-chat"] = budget(chat_messages("english"), 20000)
kinds["european"] = prose("de", latin, 10000) + prose("fr", latin, 10000) + prose("es", latin, 10000)
kinds["chinese"] = budget(chat_messages("chinese"), 6000) + prose("zh_CN", cjk, 6000) + man_pages("manpages-zh", "zh_CN", cjk, 6000)
kinds["japanese"] = budget(chat_messages("japanese"), 6000) + prose("ja", cjk, 6000) + man_pages("manpages-ja", "ja", cjk, 6000)
kinds["korean"] = budget(chat_messages("korean"), 6000) + prose("ko", hangul, 6000)
kinds["russian"] = chat_messages("russian") + prose("ru", cyr, 14000) + man_pages("manpages-ru", "ru", cyr, 8000)
kinds["greek"] = prose("el", greek, 22000) + man_pages("manpages-el", "el", greek, 8000)
kinds["hebrew"] = chat_messages("hebrew") + cat("he", ("gtk20", "shared-mime-info", "xkeyboard-config"), hebrew, 12000)
kinds["arabic"] = cat("ar", ("apt", "libapt-pkg6.0", "glib20", "gtk20"), arabic, 14000)
kinds["hindi"] = chat_messages("hindi") + prose("hi", deva) + cat("hi", ("glib20", "gtk20-properties", "gsettings-desktop-schemas"), deva, 10000)
kinds["thai"] = chat_messages("thai") + cat("th", ("dpkg",), thai, 12000)

# Code: Go (GOROOT), Python (the standard library), JavaScript (an npm package).
goroot = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True).stdout.strip()
code = []
for f in ["src/net/http/cookie.go", "src/strings/builder.go", "src/encoding/csv/reader.go"]:
    code += lines_messages(open(os.path.join(goroot, f)).read(), 300, 2000, limit=7)
for f in ["json/decoder.py", "textwrap.py", "shlex.py"]:
    code += lines_messages(open(os.path.join(sys.prefix, "lib", "python%d.%d" % sys.version_info[:2], f)).read(), 300, 2000, limit=7)
js = glob.glob(os.path.join(os.path.dirname(__file__), "../../bindings/node/node_modules/@extism/extism/dist/node/index.js"))
for f in js:
    code += lines_messages(open(f).read(), 300, 2000, limit=6)
kinds["code"] = code

out = os.path.join(STAGING, "out")
rd = lambda n: open(os.path.join(out, n), encoding="utf-8", errors="replace").read()
kinds["json"] = (lines_messages(rd("go-list.json"), 200, 2500, limit=6) +
                 lines_messages(rd("npm-view-tiktoken.json"), 200, 2500) + lines_messages(rd("npm-view-extism.json"), 200, 2500) +
                 lines_messages(rd("pip-inspect.json")[:12000], 200, 2500) + lines_messages(rd("dpkg-query.jsonl"), 200, 2500, limit=6))
kinds["logs"] = (lines_messages(rd("dpkg.log.txt"), 200, 2500, limit=4) + lines_messages(rd("apt-term.txt"), 200, 2500, limit=3) +
                 lines_messages(rd("hashes.txt"), 200, 2500) + lines_messages(rd("ls-etc.txt"), 200, 2500, limit=2) +
                 lines_messages(rd("ldd.txt"), 200, 2500) + lines_messages(rd("base64-true.txt"), 200, 2500) +
                 lines_messages(rd("go.sum.txt"), 200, 2500, limit=3) + lines_messages(rd("reqlog.txt"), 200, 2500))

# Emoji: English chat turns each followed by emoji, and emoji with their CLDR names, as people write them.
emo = json.load(open(os.path.join(STAGING, "npm/emojibase-data-17.0.0/package/en/compact.json"), encoding="utf-8"))
pool = []
for e in emo:
    pool.append(e["unicode"])
    for s in e.get("skins", [])[:2]:
        pool.append(s["unicode"])
turns = [t for conv in chat_lines("english") for t in conv][400:1400]
withemoji = [t + " " + "".join(rng.choice(pool) for _ in range(rng.randint(1, 4))) for t in turns]
named = ["%s %s" % (e["unicode"], e["label"]) for e in emo if "label" in e]
kinds["emoji"] = budget(pack(withemoji, 20, 400, sep="\n"), 10000) + budget(pack(named[::7], 40, 600, sep="\n"), 6000)

for k, msgs in kinds.items():
    d = os.path.join(OUT, k)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "messages.jsonl"), "w", encoding="utf-8") as fh:
        for m in msgs:
            fh.write(json.dumps({"text": m}, ensure_ascii=False) + "\n")
    print("%-14s %4d messages %7d chars %7d bytes" % (k, len(msgs), sum(map(len, msgs)), sum(len(m.encode()) for m in msgs)))
