#!/usr/bin/env python3
"""scale.py — N short processes of one program into one profile, each under
a test name of its own, against the same N unnamed: what a process pays to
dump as the named section grows with N.

  scale.py OUT.TSV WORKDIR NS EXE ARG...

For each N of NS (comma-separated, e.g. 10,100,1000) the program EXE ARG...
(stdout to /dev/null) runs N times one after the other, three ways:
"devnull" (BALLARUS_PROFILE=/dev/null: counting, never dumping), "unnamed"
(every process into WORKDIR/pool.bprof) and "named" (the same, process i
with BALLARUS_TEST=tI, N names).  Per process: user + system CPU from
wait4.  Per (N, kind) a line of OUT.TSV: the mean CPU of the last 10 % of
the processes (where the file is largest), that minus devnull's mean (the
dump), the mean over all N, the profile's final size and, for named, the
bytes each name added over the unnamed profile.  Run it pinned (taskset).
"""
import os
import subprocess
import sys


def run_all(n, kind, exe_args, pool):
    """CPU seconds of each of n processes."""
    if os.path.exists(pool):
        os.unlink(pool)
    cpu = []
    for i in range(n):
        env = dict(os.environ)
        env["BALLARUS_PROFILE"] = "/dev/null" if kind == "devnull" else pool
        env.pop("BALLARUS_TEST", None)
        if kind == "named":
            env["BALLARUS_TEST"] = "t%05d" % i
        p = subprocess.Popen(exe_args, env=env, stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        if status != 0:
            sys.exit(f"scale.py: {kind} process {i} failed (status {status})")
        cpu.append(ru.ru_utime + ru.ru_stime)
    return cpu


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    out, work, ns, exe_args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    os.makedirs(work, exist_ok=True)
    pool = os.path.join(work, "pool.bprof")
    with open(out, "w") as f:
        f.write("n\tkind\tcpu_ms_tail\tdump_ms_tail\tcpu_ms_mean\tbytes\t"
                "bytes_per_name\n")
        for n in (int(x) for x in ns.split(",")):
            tail = max(1, n // 10)
            base = None
            unnamed_bytes = 0
            for kind in ("devnull", "unnamed", "named"):
                cpu = run_all(n, kind, exe_args, pool)
                mean_tail = sum(cpu[-tail:]) / tail * 1000
                mean = sum(cpu) / n * 1000
                if base is None:
                    base = mean
                size = os.path.getsize(pool) if kind != "devnull" else 0
                if kind == "unnamed":
                    unnamed_bytes = size
                per_name = ("%.0f" % ((size - unnamed_bytes) / n)
                            if kind == "named" else "")
                f.write("%d\t%s\t%.3f\t%.3f\t%.3f\t%d\t%s\n"
                        % (n, kind, mean_tail, mean_tail - base, mean, size,
                           per_name))
                f.flush()
                print(f"scale.py: N={n} {kind}: {mean_tail:.2f} ms/process "
                      f"(last 10 %), {size} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
