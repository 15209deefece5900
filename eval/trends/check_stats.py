"""Summarise the hand checks in checks.jsonl against the current definitions.

Usage:  python3 check_stats.py

For each topic it redraws the fixed samples (sample.py), looks up the recorded
judgements and prints:
  * precision   = matched papers judged on topic / matched papers judged
  * near_on     = near misses judged on topic (papers the definition misses),
                  out of the 20-paper near-miss sample
  * recall_est  = TP_est / (TP_est + FN_est), where
                  TP_est = total matches x precision,
                  FN_est = near-miss pool size x near_on / 20.
  * recall_lo   = the same with the near-miss on-topic rate replaced by its
                  one-sided 95% Clopper-Pearson upper bound (a pessimistic value)
For topics with a targeted extra check (sample.TARGETED) the targeted sample
is also shown and FN_est becomes the stratified sum
  targeted pool x targeted rate + (near pool - targeted pool) x near rate.
The recall figures only cover misses among papers that use one of the topic's
related words; they are rough figures from 20-paper samples.
"""

import json
from math import comb
from pathlib import Path

from gold import load_definitions
from sample import TARGETED, draw

HERE = Path(__file__).resolve().parent


def cp_upper(k, n, alpha=0.05):
    """One-sided Clopper-Pearson upper bound for a binomial proportion."""
    if k >= n:
        return 1.0
    lo, hi = k / n, 1.0
    for _ in range(60):  # bisection on P(X <= k | p) = alpha
        mid = (lo + hi) / 2
        cdf = sum(comb(n, i) * mid**i * (1 - mid) ** (n - i) for i in range(k + 1))
        lo, hi = (mid, hi) if cdf > alpha else (lo, mid)
    return hi


def main():
    judged = {}
    for line in open(HERE / "checks.jsonl"):
        r = json.loads(line)
        judged[(r["topic"], r["id"])] = r["on_topic"]
    print(
        f"{'topic':28s} {'total':>5s} {'precision':>11s} {'near_on':>7s} {'pool':>5s}"
        f" {'recall_est':>10s} {'recall_lo':>9s}  targeted"
    )
    for key in load_definitions():
        pool_m, sample_m, _ = draw(key, "matches")
        pool_n, sample_n, _ = draw(key, "near")
        samples = sample_m + sample_n
        if key in TARGETED:
            pool_t, sample_t, _ = draw(key, "targeted")
            samples += sample_t
        missing = [p["id"] for p in samples if (key, p["id"]) not in judged]
        if missing:
            print(f"{key:28s} UNJUDGED {missing}")
            continue
        on_m = sum(judged[(key, p["id"])] for p in sample_m)
        on_n = sum(judged[(key, p["id"])] for p in sample_n)
        prec = on_m / len(sample_m)
        tp = len(pool_m) * prec
        rate, rate_hi = on_n / len(sample_n), cp_upper(on_n, len(sample_n))
        fn, fn_hi = len(pool_n) * rate, len(pool_n) * rate_hi
        extra = ""
        if key in TARGETED:
            on_t = sum(judged[(key, p["id"])] for p in sample_t)
            rest = max(len(pool_n) - len(pool_t), 0)
            fn = len(pool_t) * on_t / len(sample_t) + rest * rate
            fn_hi = len(pool_t) * cp_upper(on_t, len(sample_t)) + rest * rate_hi
            extra = f"{on_t}/{len(sample_t)} of pool {len(pool_t)}"
        print(
            f"{key:28s} {len(pool_m):5d} {on_m:3d}/{len(sample_m)}={prec:.2f} "
            f"{on_n:4d}/{len(sample_n)} {len(pool_n):5d} {tp / (tp + fn):10.2f} "
            f"{tp / (tp + fn_hi):9.2f}  {extra}"
        )


if __name__ == "__main__":
    main()
