#!/usr/bin/env python3
"""Fits the conservative estimator's event costs (core/tokens.go tokenCost).

Input: the event counts of every corpus message (go run ./tools/window
-features FILE) and their real counts (node tools/window/count.mjs).
A linear program: the costs (thousandths of a token, ≥ 0) that minimize
the mean, over kinds, of each kind's mean estimate ÷ max(o200k, cl100k),
subject to every message's estimate ≥ its larger real count + MARGIN of
that count, and English prose ≤ LIMIT × its o200k count in total. Costs
of events the corpus lacks are pinned (FIXED). Needs numpy and scipy.

Usage: fit.py FEATURES COUNTS
"""
import json
import sys

import numpy as np
from scipy.optimize import linprog

MARGIN = 0.03   # every message at least 3% over the larger real count
LIMIT = 1.27    # English prose, in total, under 1.27 × o200k before rounding (docs/spec.md#counting-tokens-and-the-window: 1.35)
# Events with no (or too little) calibration data, pinned: a control
# character or a byte of an unknown script is at most one token (a
# byte-level BPE never uses more); the rest are lower bounds.
FIXED = {"byte": 1000, "control": 1000}
FLOOR = {"digits": 1000, "emoji": 1000, "symbol": 1000, "cjk_punct": 1000, "punct": 500, "breaks": 500,
         "punct_rep": 100, "blanks": 500}
# Upper bounds where the corpus would let one event pay for others (a
# letter with a diacritic is not six tokens: it would overcount Vietnamese).
CEIL = {"latin_x": 1500, "latin_word": 2500, "space_num": 1200, "cjk_punct": 1500, "case": 1000}

feat, counts = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
names = feat["names"]
rows, reals, o200, kinds = [], [], [], []
for kind, fs in feat["kinds"].items():
    for f, (o, c) in zip(fs, counts[kind]):
        rows.append(f)
        reals.append(max(o, c))
        o200.append(o)
        kinds.append(kind)
A, r = np.array(rows, float), np.array(reals, float)
n = len(names)
# objective: Σ_kind mean_i(est_i / r_i) / kinds
cost = np.zeros(n)
uk = sorted(set(kinds))
for k in uk:
    idx = [i for i, kk in enumerate(kinds) if kk == k]
    cost += (A[idx] / r[idx, None]).sum(0) / len(idx)
A_ub = [-A]                                  # -est ≤ -(1+m) r
b_ub = [-(1 + MARGIN) * r * 1000]
pro = [i for i, k in enumerate(kinds) if k == "english-prose"]
A_ub.append(A[pro].sum(0)[None, :])           # Σ est ≤ LIMIT Σ o200k
b_ub.append(np.array([LIMIT * sum(o200[i] for i in pro) * 1000]))
bounds = []
for nm in names:
    if nm in FIXED:
        bounds.append((FIXED[nm], FIXED[nm]))
    else:
        bounds.append((FLOOR.get(nm, 0), CEIL.get(nm)))
res = linprog(cost, A_ub=np.vstack(A_ub), b_ub=np.concatenate(b_ub), bounds=bounds, method="highs")
if not res.success:
    sys.exit(res.message)
w = np.ceil(res.x / 10) * 10                  # rounded up to hundredths
for nm, v in zip(names, w):
    print("\t%-12s %5d," % ("ev" + "".join(p.capitalize() for p in nm.split("_")) + ":", v))
est = np.ceil(A @ w / 1000)
for k in uk:
    idx = [i for i, kk in enumerate(kinds) if kk == k]
    rr = est[idx] / r[idx]
    print("%-14s mean %.2f min %.2f total %.2f" % (k, rr.mean(), rr.min(), est[idx].sum() / r[idx].sum()), file=sys.stderr)
