#!/usr/bin/env python3
"""pooled.py -- one figure from several independent layout sets.

  pooled.py PART FILE:BUILD/REF ...

Each FILE is the output of `layouts.py time`; from it the line

  BUILD/REF PART median M [lo, hi] faster A/N

(PART: c, d or c+d) gives the set's median ratio M and the rounds A of N in
which BUILD was faster than REF.  Prints every set, then

  * the mean of the set medians with a 95 % Student t interval over sets
    (each set one observation: rounds within a set share the machine's
    phases, so the sets disagree by more than their own intervals);
  * the rounds BUILD was faster in, over all sets, with the two-sided
    exact sign-test p-value of "faster as often as slower".
"""
import math, re, statistics, sys

# Two-sided 95 % quantiles of Student's t, by degrees of freedom.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365,
        8: 2.306, 9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160,
        14: 2.145, 15: 2.131, 20: 2.086, 30: 2.042}


def t975(df):
    return T975.get(df) or T975[max(k for k in T975 if k <= df)]


def sign_test(faster, n):
    """Two-sided exact binomial p of `faster` successes in n at p = 1/2."""
    k = min(faster, n - faster)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    part = argv[1]
    meds, faster, n = [], 0, 0
    for spec in argv[2:]:
        path, _, pair = spec.rpartition(":")
        pat = re.compile(r"^%s %s\s+median ([0-9.]+) \[([0-9.]+), ([0-9.]+)\] faster (\d+)/(\d+)"
                         % (re.escape(pair), re.escape(part)))
        found = [pat.match(line) for line in open(path)]
        found = [m for m in found if m]
        if len(found) != 1:
            sys.exit("pooled.py: %s: expected one line for %s %s, found %d"
                     % (path, pair, part, len(found)))
        m = found[0]
        meds.append(float(m.group(1)))
        faster += int(m.group(4))
        n += int(m.group(5))
        print("%-48s %s %s %.4f [%s, %s] faster %s/%s" % (
            path, pair, part, meds[-1], m.group(2), m.group(3), m.group(4), m.group(5)))
    mean = statistics.mean(meds)
    if len(meds) > 1:
        half = t975(len(meds) - 1) * statistics.stdev(meds) / math.sqrt(len(meds))
        print("%d sets: mean of the set medians %.4f, 95 %% t interval [%.4f, %.4f]"
              % (len(meds), mean, mean - half, mean + half))
    print("rounds faster: %d of %d (%.1f %%), sign test p = %.3g"
          % (faster, n, 100.0 * faster / n, sign_test(faster, n)))


if __name__ == "__main__":
    main(sys.argv)
