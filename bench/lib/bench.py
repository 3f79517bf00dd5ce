#!/usr/bin/env python3
"""bench.py — the Python half of bench/run.sh (standard library only).

Small readers, each printing one tab-separated line for run.sh:

  ballarus-stats STATS_JSON   `ballarus-reconstruct stats --json` totals:
                              static counters, dynamic increments, and any
                              other numeric total fields ("k=v;k=v": path
                              mode's fields once it reports them)
  gcov-stats STATS_JSON       the same for the "gcov" part (stats --gcov)
  clang-stats PROFDATA_TXT    `llvm-profdata show --text --all-functions`:
                              number of counters and the sum of their values
  ballarus-count SHOW_JSON F  execution count of function F (show --json)
  gcov-count STATS_JSON F     gcov's count of F, a one-counter function
  clang-count PROFDATA_TXT F  clang's count of F, a one-counter function
  same-counts A.json B.json   exit 1 (printing the first differences) unless
                              two `show --json` outputs have the same count
                              on every edge and block of every function
  vector TOOL FILE            {function: sum of its counters} as JSON, from
                              stats --json (TOOL ballarus: edge counters plus
                              path counts; gcov: the "gcov" part) or from
                              llvm-profdata's text (TOOL clang)
  compare-vectors SEQ PAR     "expected counted differing": the sums of two
                              vectors and how many functions differ
  cg-functions CG_OUT...      instructions per function of cachegrind output
                              files (summed over files), "function<TAB>Ir",
                              the top ones (>= 0.01 % of the total, at most
                              200), most first
  sizes EXE BUILDDIR          the executable's size by section (`size -A`):
                              "file text rodata eh_frame data bss metadata
                              gcno" in bytes (file: the whole file; eh_frame:
                              .eh_frame + .eh_frame_hdr; data: .data +
                              .data.rel.ro + .init_array + ballarus_tus;
                              metadata: the ballarus metadata blobs, part of
                              .rodata, from `nm -S`; gcno: gcov's notes
                              under BUILDDIR, written at compile time)
  layout SEED KEY OBJ...      a random code layout for one link, the same
                              for the same SEED and KEY: the bytes of padding
                              to put ahead of the program's code (a multiple
                              of 16 below 4096) on the first line, then the
                              objects in a shuffled order, one per line

and the report:

  report RAWDIR OUTDIR CHART  reads RAWDIR/*.tsv and OUTDIR/machine.txt,
                              writes OUTDIR/results.md, RAWDIR/chart.dat and
                              RAWDIR/chart.gp (run gnuplot on it from OUTDIR);
                              CHART 0: no chart (results.md does not link it)
"""

import csv
import json
import math
import os
import random
import statistics
import subprocess
import sys

KNOWN_TOTALS = ("name", "file", "blocks", "edges", "static_counters",
                "dynamic_increments")


def fail(msg):
    print("bench.py: " + msg, file=sys.stderr)
    sys.exit(1)


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (path, e))


def totals_line(total):
    """static, increments, extra numeric fields of a stats "total" object."""
    if not isinstance(total, dict):
        fail("no total in the stats output")
    extra = []
    for k, v in total.items():
        if k in KNOWN_TOTALS:
            continue
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            extra.append("%s=%s" % (k, v))
        elif isinstance(v, dict):  # e.g. {"paths": {...}}: flatten one level
            for k2, v2 in v.items():
                if isinstance(v2, (int, float)) and not isinstance(v2, bool):
                    extra.append("%s.%s=%s" % (k, k2, v2))
    return "%s\t%s\t%s" % (total.get("static_counters", ""),
                           total.get("dynamic_increments", ""),
                           ";".join(extra))


def read_profdata_text(path):
    """{function name: [counter values]} from llvm-profdata show --text."""
    funcs = {}
    try:
        lines = open(path).read().split("\n")
    except OSError as e:
        fail("%s: %s" % (path, e))
    i = 0
    name = None
    while i < len(lines):
        line = lines[i].strip()
        if line == "# Num Counters:" and name is not None and i + 2 < len(lines):
            n = int(lines[i + 1])
            if lines[i + 2].strip() != "# Counter Values:":
                fail("%s: unexpected layout near line %d" % (path, i + 3))
            vals = [int(v) for v in lines[i + 3:i + 3 + n]]
            funcs.setdefault(name, []).extend(vals)
            i += 3 + n
            name = None
            continue
        # A function record starts with its name, then "# Func Hash:".
        if i + 1 < len(lines) and lines[i + 1].strip() == "# Func Hash:":
            name = line
        i += 1
    if not funcs:
        fail("%s: no functions" % path)
    return funcs


def short_name(clang_name):
    # Local functions are "path/file.c:name".
    return clang_name.rsplit(":", 1)[-1]


def cmd_same_counts(a_path, b_path):
    def counts(path):
        out = {}
        for f in load_json(path).get("functions", []):
            key = (f.get("name"), f.get("file"), f.get("line"))
            out[key] = ([e.get("count") for e in f.get("edges", [])],
                        [b.get("count") for b in f.get("blocks", [])])
        return out
    a, b = counts(a_path), counts(b_path)
    bad = []
    for key in sorted(set(a) | set(b), key=str):
        if key not in a or key not in b:
            bad.append("%s: only in %s" % (key[0], a_path if key in a else b_path))
        elif a[key] != b[key]:
            which = "edge" if a[key][0] != b[key][0] else "block"
            bad.append("%s (%s:%s): %s counts differ" % (key[0], key[1], key[2], which))
    if bad:
        print("\n".join(bad[:10]) + ("\n... %d in all" % len(bad) if len(bad) > 10 else ""))
        sys.exit(1)
    print("%d functions equal" % len(a))


def cmd_vector(tool, path):
    out = {}
    if tool == "clang":
        for k, vals in read_profdata_text(path).items():
            out[k] = out.get(k, 0) + sum(vals)
    else:
        j = load_json(path)
        if tool == "gcov":
            j = j.get("gcov", {})
        for f in j.get("functions", []):
            key = "%s|%s" % (f.get("name"), f.get("file"))
            n = int(f.get("dynamic_increments") or 0) + int(f.get("path_increments") or 0)
            out[key] = out.get(key, 0) + n
    print(json.dumps(out, sort_keys=True))


def cmd_compare_vectors(a_path, b_path):
    a, b = load_json(a_path), load_json(b_path)
    differing = sum(1 for k in set(a) | set(b) if a.get(k, 0) != b.get(k, 0))
    print("%d\t%d\t%d" % (sum(a.values()), sum(b.values()), differing))


def read_cachegrind(paths):
    """{function: Ir} summed over cachegrind output files."""
    funcs = {}
    for path in paths:
        fn = None
        try:
            f = open(path, errors="replace")
        except OSError as e:
            fail("%s: %s" % (path, e))
        with f:
            for line in f:
                if line.startswith("fn="):
                    fn = line[3:].rstrip("\n")
                elif line[:1].isdigit() and fn is not None:
                    parts = line.split()
                    if len(parts) >= 2:
                        funcs[fn] = funcs.get(fn, 0) + int(parts[1])
    return funcs


def cmd_cg_functions(paths):
    funcs = read_cachegrind(paths)
    total = sum(funcs.values())
    top = sorted(funcs.items(), key=lambda kv: -kv[1])[:200]
    for name, ir in top:
        if ir * 10000 >= total:
            print("%s\t%d" % (name.replace("\t", " "), ir))


# ------------------------------------------------------------------ report

def read_tsv(path, optional=False):
    if optional and not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


# The ballarus runtime's functions (runtime/*.c) that show up in profiles.
RUNTIME_FUNCTIONS = ("path_add_slow", "grow", "rt_init", "dump_chain", "dump_group",
                     "snapshot", "write_all", "merge_sparse", "merge_into")
BREAKDOWN = ("edge", "path", "path-et-off", "path-hash",
             "path-no-hoist", "path-no-returns", "path-number", "path-loops",
             "path-dense", "path-hashed", "edge-path")


def fmt_ratio(x):
    return "%.2f" % x if x < 9.995 else "%.1f" % x


def fmt_int(s):
    try:
        return str(int(s))
    except (TypeError, ValueError):
        return s or "–"


def extra_fields(row):
    out = {}
    for kv in (row.get("extra") or "").split(";"):
        k, _, v = kv.partition("=")
        try:
            out[k] = int(v)
        except ValueError:
            pass
    return out


def work_totals(row):
    """(counter slots, counter updates) of a counters.tsv row: the edge
    counters plus, in path mode, the path-count slots (dense arrays and hash
    entries) and the path-count increments (one per completed path)."""
    try:
        st, inc = int(row["static_counters"]), int(row["dynamic_increments"])
    except (TypeError, ValueError, KeyError):
        return None, None
    x = extra_fields(row)
    st += x.get("path_dense_slots", 0) + x.get("path_hashed_entries", 0)
    inc += x.get("path_increments", 0)
    return st, inc


def rel(x, base):
    if x is None or not base:
        return "–"
    return "%.3f" % (x / base)


def machine_threads(machine):
    """The thread count of the threads workloads, from machine.txt."""
    for line in machine.split("\n"):
        if line.startswith("workloads:") and "threads " in line:
            rest = line.split("; threads ", 1)[-1].split()
            if rest and rest[0].isdigit():
                return rest[0]
    return "N"


def fmt_m(x):
    return "%+.1f M" % (x / 1e6)


def breakdown_section(programs, vnames, ir, functions, counters):
    """Where path profiling's instructions go: the breakdown variants'
    instruction ratios, and per function the instructions each adds over the
    plain build."""
    bvars = [v for v in BREAKDOWN if v in vnames and v.startswith("path-")]
    if not bvars:
        return []
    cols = [v for v in BREAKDOWN if v in vnames]
    L = ["## Where path profiling's instructions go", "",
         "Instructions executed over the plain build's (as above) for edge "
         "profiling, path profiling, and path profiling with one mechanism "
         "changed: `path-et-off` without the early-termination pre-count "
         "(`early-termination=off`), `path-hash` with functions above `path-table-max` in the "
         "runtime hash table instead of cut (`path-storage=hash`, the former "
         "storage), `path-no-hoist` with path ends where they are "
         "(`tune-path-hoist=off`), `path-no-returns` with a pre-count before calls "
         "to always-returning functions too (`tune-path-returns=off`), "
         "`path-number` with the path number in the register and range-checked "
         "counts (`tune-path-register=number`), `path-loops` with one-path loops "
         "counted in locals on static estimates (`tune-path-loops=on`), "
         "`path-dense` with dense path tables up to a huge path count, uncut "
         "and hashed above it, `path-hashed` with every function's paths in "
         "the runtime hash table (`path-table-max=0`).  *Extra*: the "
         "instructions added over "
         "plain, in millions, and as a share of `path`'s.  *Per update*: the "
         "extra instructions per counter update of the run (edge counter "
         "increments plus completed paths, from *Counter work*).", ""]
    work = {}
    for c in counters:
        st, inc = work_totals(c)
        if inc:
            work[(c["program"], c["variant"])] = inc
    L.append("| variant | " + " | ".join("%s ratio | extra | per update" % p for p in programs) + " |")
    L.append("|---|" + "---:|---:|---:|" * len(programs))
    for v in cols:
        cells = []
        for p in programs:
            if (p, v) not in ir:
                cells += ["–", "–", "–"]
                continue
            base = ir[(p, "plain")]
            extra = ir[(p, v)] - base
            pextra = ir.get((p, "path"), base) - base
            share = " (%.0f %%)" % (100.0 * extra / pextra) if pextra > 0 else ""
            inc = work.get((p, v))
            cells += ["%.3f" % (ir[(p, v)] / base), fmt_m(extra) + share,
                      "%.1f" % (extra / inc) if inc else "–"]
        L.append("| %s | %s |" % (v, " | ".join(cells)))
    L.append("")
    if not functions:
        return L
    fir = {}
    for f in functions:
        fir[(f["program"], f["variant"], f["function"])] = int(f["instructions"])
    L.append("Per function (cachegrind's instructions by function, instrumented "
             "minus plain, millions; the functions where `path` adds the most, "
             "then where each other variant does.  Cachegrind counts a "
             "function's own instructions, so code inlined into a function "
             "counts there: a function *inlined in plain* is one the plain "
             "build inlines everywhere and an instrumented build does not "
             "(its call overhead is then part of the cost); *runtime*: the "
             "ballarus runtime's.  A function below 0.01 % of a run's "
             "instructions counts as 0 there.)")
    L.append("")
    for p in programs:
        plain = {fn: n for (pp, vv, fn), n in fir.items() if pp == p and vv == "plain"}
        path = {fn: n for (pp, vv, fn), n in fir.items() if pp == p and vv == "path"}
        if not plain or not path:
            continue
        # Rows: the functions where path adds the most, then those where any
        # other variant adds the most.
        rows = []
        for v in ["path"] + [v for v in cols if v != "path"]:
            fv = {fn: n for (pp, vv, fn), n in fir.items() if pp == p and vv == v}
            delta = sorted(((n - plain.get(fn, 0), fn) for fn, n in fv.items()), reverse=True)
            for d, fn in delta[:8 if v == "path" else 3]:
                if d > 0 and fn not in rows:
                    rows.append(fn)
        L.append("**%s**" % p)
        L.append("")
        L.append("| function | plain | " + " | ".join(cols) + " |")
        L.append("|---|---:|" + "---:|" * len(cols))
        for fn in rows:
            cells = []
            for v in cols:
                if not any(pp == p and vv == v for (pp, vv, _) in fir):
                    cells.append("–")
                    continue
                cells.append(fmt_m(fir.get((p, v, fn), 0) - plain.get(fn, 0)))
            if fn in plain:
                note = ""
            elif fn.startswith(("__ballarus", "ballarus_")) or fn in RUNTIME_FUNCTIONS:
                note = " (runtime)"
            else:
                note = " (inlined in plain)"
            L.append("| `%s`%s | %.1f M | %s |" % (fn, note, plain.get(fn, 0) / 1e6,
                                                " | ".join(cells)))
        L.append("| all | %.1f M | %s |" % (ir[(p, "plain")] / 1e6, " | ".join(
            fmt_m(ir[(p, v)] - ir[(p, "plain")]) if (p, v) in ir else "–" for v in cols)))
        L.append("")
    return L


def median_interval(xs, level=0.90, resamples=1000):
    """The median of xs and a bootstrap interval of it (seeded: the same
    data give the same interval)."""
    rng = random.Random(0)
    meds = sorted(statistics.median(rng.choices(xs, k=len(xs)))
                  for _ in range(resamples))
    lo = meds[int(resamples * (1 - level) / 2)]
    hi = meds[int(resamples * (1 + level) / 2) - 1]
    return statistics.median(xs), lo, hi


def same_round_ratios(by_round, p, v, other):
    """Variant v's run time over variant other's in each round both ran of
    program p (by_round: (program, variant, round) -> microseconds)."""
    return [us / by_round[(p, other, rd)] for (pp, vv, rd), us in by_round.items()
            if pp == p and vv == v and (p, other, rd) in by_round]


def head_to_head_section(programs, vnames, vinfo, ratios, by_round):
    """Each ballarus variant's run against gcov's run of the same round
    (both paired with a plain run of that round): the per-round ratio's
    median with a 90 % bootstrap interval, how often the variant was
    faster, and its overhead over plain as a multiple of gcov's (medians of
    the per-round ratios to plain, `ratios`; issue 14's targets are path
    <= 1 and edge,path <= 1.5)."""
    if "gcov" not in vinfo or vinfo["gcov"].get("base") != "plain":
        return []
    cols = [v for v in vnames if vinfo[v].get("kind") == "ballarus"
            and vinfo[v].get("base") == "plain"]
    rows = []
    for v in cols:
        cells, any_cell = [], False
        for p in programs:
            xs = same_round_ratios(by_round, p, v, "gcov")
            g = ratios.get((p, "gcov"), [])
            if len(xs) < 2 or not g:
                cells.append("–")
                continue
            any_cell = True
            med, lo, hi = median_interval(xs)
            g_over = statistics.median(g) - 1
            v_over = statistics.median(ratios[(p, v)]) - 1
            multiple = ("%.2f×" % (v_over / g_over)) if g_over > 0 else "–"
            cells.append("%.3f [%.3f, %.3f], %d/%d, %s" % (
                med, lo, hi,
                sum(x < 1 for x in xs), len(xs), multiple))
        if any_cell:
            rows.append("| %s | %s |" % (v, " | ".join(cells)))
    if not rows:
        return []
    L = ["## Head to head with gcov", "",
         "Each ballarus variant's run time over gcov's run of the same "
         "round: the median over the rounds with a 90 % bootstrap interval "
         "of it, the rounds in which the variant was faster, and its "
         "overhead over plain (median of its per-round ratios, less 1) as a "
         "multiple of gcov's.", "",
         "| variant | " + " | ".join(programs) + " |",
         "|---|" + "---:|" * len(programs)]
    return L + rows + [""]


LAYOUT_PAD_STEP = 16     # functions start 16-byte aligned: a finer pad moves nothing
LAYOUT_PAD_STEPS = 256   # 0 .. 4080 bytes: every offset within a page


SIZE_COLUMNS = ("file", "text", "rodata", "eh_frame", "data", "bss",
                "metadata", "gcno")
SIZE_SECTIONS = {".text": "text", ".rodata": "rodata",
                 ".eh_frame": "eh_frame", ".eh_frame_hdr": "eh_frame",
                 ".data": "data", ".data.rel.ro": "data",
                 ".init_array": "data", "ballarus_tus": "data",
                 ".bss": "bss"}


def cmd_sizes(exe, build_dir):
    sizes = dict.fromkeys(SIZE_COLUMNS, 0)
    sizes["file"] = os.path.getsize(exe)
    out = subprocess.run(["size", "-A", exe], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[0] in SIZE_SECTIONS and f[1].isdigit():
            sizes[SIZE_SECTIONS[f[0]]] += int(f[1])
    out = subprocess.run(["nm", "-S", exe], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[3].split(".")[0] == "__ballarus_metadata":
            sizes["metadata"] += int(f[1], 16)
    for root, _, files in os.walk(build_dir):
        sizes["gcno"] += sum(os.path.getsize(os.path.join(root, n))
                             for n in files if n.endswith(".gcno"))
    print("\t".join(str(sizes[c]) for c in SIZE_COLUMNS))


def fmt_kb(n):
    return "%.1f" % (n / 1024) if n < 10240 else "%.0f" % (n / 1024)


def size_section(programs, vnames, sizes):
    """The *Binary size* section: per program, each variant's executable
    by section in KiB, and the file's ratio to plain's."""
    if not sizes:
        return []
    L = ["## Binary size", "",
         "Each variant's executable (`size -A`, KiB): *file* the whole file "
         "(its ratio to plain's beside it), *eh_frame* with its header, "
         "*data* `.data` + `.data.rel.ro` + `.init_array` + `ballarus_tus`; "
         "*metadata* the ballarus metadata blobs (deflated, in `.rodata`: "
         "what makes a profile self-contained); *.gcno* gcov's notes, "
         "written beside the objects at compile time instead.  `.bss` "
         "(counters) takes no file space.", ""]
    order = {v: i for i, v in enumerate(vnames)}
    for p in programs:
        rows = sorted((r for r in sizes if r["program"] == p),
                      key=lambda r: order.get(r["variant"], 99))
        plain = next((int(r["file"]) for r in rows if r["variant"] == "plain"), 0)
        if not rows:
            continue
        L += ["### %s" % p, "",
              "| variant | file | vs plain | .text | .rodata | of which metadata "
              "| eh_frame | data | .bss | .gcno |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            n = {c: int(r[c]) for c in SIZE_COLUMNS}
            L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["variant"], fmt_kb(n["file"]),
                fmt_ratio(n["file"] / plain) if plain else "–",
                fmt_kb(n["text"]), fmt_kb(n["rodata"]),
                fmt_kb(n["metadata"]) if n["metadata"] else "–",
                fmt_kb(n["eh_frame"]), fmt_kb(n["data"]), fmt_kb(n["bss"]),
                fmt_kb(n["gcno"]) if n["gcno"] else "–"))
        L.append("")
    return L


def cmd_layout(seed, key, objs):
    """Link order and code offset both move a program's hot loops across
    cache-line, fetch-block and page boundaries, which changes run time by
    several per cent independently of the code (Mytkowicz et al., ASPLOS
    2009; Curtsinger and Berger, ASPLOS 2013).  run.sh links every variant
    anew in each timed round from the layout printed here, so that a time
    ratio averages over layouts instead of measuring one."""
    rng = random.Random("%s/%s" % (seed, key))  # str seeds hash the same in every run
    pad = LAYOUT_PAD_STEP * rng.randrange(LAYOUT_PAD_STEPS)
    order = list(objs)
    rng.shuffle(order)
    print(pad)
    for o in order:
        print(o)


def cmd_report(raw, out, chart="1"):
    variants = read_tsv(os.path.join(raw, "variants.tsv"))
    builds = read_tsv(os.path.join(raw, "builds.tsv"))
    runs = read_tsv(os.path.join(raw, "runs.tsv"))
    counters = read_tsv(os.path.join(raw, "counters.tsv"))
    exact = read_tsv(os.path.join(raw, "exact.tsv"))
    checks = read_tsv(os.path.join(raw, "checks.tsv"))
    instr = read_tsv(os.path.join(raw, "instr.tsv"), optional=True)
    functions = read_tsv(os.path.join(raw, "functions.tsv"), optional=True)
    layouts = read_tsv(os.path.join(raw, "layouts.tsv"), optional=True)
    sizes = read_tsv(os.path.join(raw, "sizes.tsv"), optional=True)
    machine = open(os.path.join(out, "machine.txt")).read().rstrip("\n")

    vnames = [v["variant"] for v in variants]
    vinfo = {v["variant"]: v for v in variants}
    programs = []
    for b in builds:
        if b["program"] not in programs:
            programs.append(b["program"])
    # "-": valgrind could not run that build (see the checks).
    ir = {(r["program"], r["variant"]): int(r["instructions"]) for r in instr
          if r["instructions"].isdigit()}
    iprograms = [p for p in programs if (p, "plain") in ir]

    def ir_ratio(p, v):
        b = vinfo.get(v, {}).get("base", "plain")
        if b == "-":
            return None
        if (p, v) not in ir or not ir.get((p, b)):
            return None
        return ir[(p, v)] / ir[(p, b)]

    # Run-time ratios: each timed round pairs a base run with the variant run
    # right after it.
    ratios = {}    # (program, variant) -> [ratio per round]
    base_s = {}    # program -> [plain seconds]
    by_round = {}  # (program, variant, round) -> variant microseconds
    for r in runs:
        key = (r["program"], r["variant"])
        ratios.setdefault(key, []).append(int(r["variant_us"]) / int(r["base_us"]))
        by_round[(r["program"], r["variant"], r["round"])] = int(r["variant_us"])
        if r["base"] == "plain":
            base_s.setdefault(r["program"], []).append(int(r["base_us"]) / 1e6)
    nruns = max((len(v) for v in ratios.values()), default=0)

    def ratio_cell(p, v):
        xs = ratios.get((p, v))
        if not xs:
            return "–"
        med = statistics.median(xs)
        if len(xs) == 1:
            return fmt_ratio(med)
        return "%s [%s–%s]" % (fmt_ratio(med), fmt_ratio(min(xs)), fmt_ratio(max(xs)))

    L = []
    L.append("# ballarus benchmark results")
    L.append("")
    L.append("Produced by `bash bench/run.sh` (bench/README.md explains every "
             "variant and column).  Machine and command:")
    L.append("")
    L.append("```")
    L.append(machine)
    L.append("```")
    L.append("")
    if iprograms:
        L.append("## Overhead: wall time / instructions")
        L.append("")
        L.append("Each variant over its base build (gcc -O2; clang-instrumented "
                 "variants over clang-14 -O2): the median wall-time ratio (noisy, "
                 "see *Run time*) / the ratio of instructions executed by the "
                 "workload (valgrind, deterministic, see *Instructions executed*).")
        L.append("")
        L.append("| variant | " + " | ".join(iprograms) + " |")
        L.append("|---|" + "---:|" * len(iprograms))
        for v in vnames:
            if v == "plain" or not any((p, v) in ir for p in iprograms):
                continue
            cells = []
            for p in iprograms:
                xs = ratios.get((p, v))
                w = fmt_ratio(statistics.median(xs)) if xs else "–"
                x = ir_ratio(p, v)
                cells.append("%s / %s" % (w, "%.3f" % x if x is not None else "–"))
            L.append("| %s | %s |" % (v, " | ".join(cells)))
        L.append("")
        L.append("## Instructions executed")
        L.append("")
        L.append("Instructions executed by one run of the workload under "
                 "`valgrind --tool=cachegrind --cache-sim=no` (every process: "
                 "bzip2's compression and decompression), as a ratio to the base "
                 "build's; the first row is the plain build's count in millions.  "
                 "Deterministic: the same builds give the same counts on any "
                 "machine and load (up to a few instructions of start-up).")
        L.append("")
        L.append("| variant | " + " | ".join(iprograms) + " |")
        L.append("|---|" + "---:|" * len(iprograms))
        L.append("| plain (gcc -O2), millions | " + " | ".join(
            "%.1f M" % (ir[(p, "plain")] / 1e6) for p in iprograms) + " |")
        for v in vnames:
            if v == "plain" or not any((p, v) in ir for p in iprograms):
                continue
            L.append("| %s | %s |" % (v, " | ".join(
                "%.3f" % x if x is not None else "–"
                for x in (ir_ratio(p, v) for p in iprograms))))
        L.append("")
        L += breakdown_section(iprograms, vnames, ir, functions, counters)

    L.append("## Run time")
    L.append("")
    L.append("Ratio of each variant's run time to its base build's (gcc -O2; "
             "for clang-instrumented variants clang-14 -O2), "
             "median [min–max] over %d run pair%s; each pair is a base run and "
             "the variant run right after it, the variants interleaved "
             "round-robin.  The first row is the plain build's median run "
             "time in seconds." % (nruns, "" if nruns == 1 else "s"))
    L.append("")
    relinked = sorted(set(r["program"] for r in layouts or []))
    if relinked:
        n_layouts = len(set((r["program"], r["variant"], r["round"]) for r in layouts))
        L.append("Code layout: every timed round linked each variant of %s "
                 "anew from its objects in a random layout (%d links: link "
                 "order shuffled, 0–4080 bytes of padding ahead; "
                 "raw/layouts.tsv), so each ratio is over layouts, not the "
                 "one a build happened to get.%s" % (
                     ", ".join(relinked), n_layouts,
                     "" if set(relinked) >= set(programs) else
                     "  The other programs ran their one build's layout."))
        L.append("")
    L.append("| variant | " + " | ".join(programs) + " |")
    L.append("|---|" + "---:|" * len(programs))
    L.append("| plain (gcc -O2), seconds | " + " | ".join(
        ("%.3f s" % statistics.median(base_s[p])) if p in base_s else "–"
        for p in programs) + " |")
    for v in vnames:
        if v == "plain":
            continue
        L.append("| %s | %s |" % (v, " | ".join(ratio_cell(p, v) for p in programs)))
    L.append("")
    L += head_to_head_section(programs, vnames, vinfo, ratios, by_round)

    # Compile time.
    bt = {(b["program"], b["variant"]): float(b["cpu_s"]) for b in builds}
    L.append("## Compile time")
    L.append("")
    L.append("CPU time (user+sys) of the whole build of each variant, as a "
             "ratio to the plain gcc -O2 build's; the first row is that "
             "build's CPU seconds.  One build per variant.")
    L.append("")
    L.append("| variant | " + " | ".join(programs) + " |")
    L.append("|---|" + "---:|" * len(programs))
    L.append("| plain (gcc -O2), CPU seconds | " + " | ".join(
        ("%.1f s" % bt[(p, "plain")]) if (p, "plain") in bt else "–" for p in programs) + " |")
    for v in vnames:
        if v == "plain":
            continue
        cells = []
        for p in programs:
            if (p, v) in bt and bt.get((p, "plain")):
                cells.append(fmt_ratio(bt[(p, v)] / bt[(p, "plain")]))
            else:
                cells.append("–")
        L.append("| %s | %s |" % (v, " | ".join(cells)))
    L.append("")

    # Counter work.
    L.append("## Counter work")
    L.append("")
    L.append("From each instrumented variant's count run (one run of the "
             "workload).  *Static counters*: counters in the program "
             "(ballarus: `static_counters` of `ballarus-reconstruct stats`, "
             "plus, in path mode, the path-count slots `path_dense_slots` + "
             "`path_hashed_entries`; gcov: arcs off its spanning tree, from "
             "the .gcda/.gcno; clang: counters in the merged .profdata).  "
             "*Dynamic increments*: the sum of all counter values, i.e. how "
             "many counter updates the run executed (path mode: plus "
             "`path_increments`, one per completed path; the path register "
             "additions along the way are not memory updates and not "
             "counted).  Ratios are to gcov (`gcc -O2 -fprofile-arcs`).  "
             "*Other*: the further numeric fields `stats` reports.")
    L.append("")
    for p in programs:
        rows = [c for c in counters if c["program"] == p]
        if not rows:
            continue
        g = next((c for c in rows if c["variant"] == "gcov"), None)
        if g is None:
            g = next((c for c in rows if c["tool"] == "gcov"), None)
        ga = next((c for c in rows if c["variant"] == "gcov-atomic"), None)
        L.append("### %s" % p)
        L.append("")
        if g is not None and ga is not None and \
                g["dynamic_increments"] != ga["dynamic_increments"]:
            # Racy single updates lost increments: compare with exact counts.
            g = ga
            L.append("Ratios to gcov-atomic here: gcov's single updates lost "
                     "increments under threads.")
            L.append("")
        L.append("| variant | static counters | vs gcov | dynamic increments | vs gcov | other |")
        L.append("|---|---:|---:|---:|---:|---|")
        order = {v: i for i, v in enumerate(vnames)}
        gs, gi = work_totals(g) if g else (None, None)
        for c in sorted(rows, key=lambda c: order.get(c["variant"], 99)):
            st, inc = work_totals(c)
            L.append("| %s | %s | %s | %s | %s | %s |" % (
                c["variant"], fmt_int(st), rel(st, gs), fmt_int(inc), rel(inc, gi),
                (c.get("extra") or "").replace(";", ", ")))
        L.append("")

    L += size_section(programs, vnames, sizes)

    # Threads.
    def racy_cell(p, v, racy):
        if racy in ("-", ""):
            return "–"
        if racy == v:
            return "1.00"
        xs = same_round_ratios(by_round, p, v, racy)
        if not xs:
            return "–"
        med = statistics.median(xs)
        if len(xs) == 1:
            return fmt_ratio(med)
        return "%s [%s–%s]" % (fmt_ratio(med), fmt_ratio(min(xs)), fmt_ratio(max(xs)))

    # Exact counting over racy counting, variant by variant (issue 13's
    # acceptance: update=thread over update=single in the single-threaded
    # programs, geomean <= 1.05).
    exact_pairs = [(v, vinfo[v].get("racy", "-")) for v in vnames
                   if vinfo[v].get("racy", "-") not in ("-", "", v)
                   and vinfo[v].get("racy") in vinfo]
    sprogs = [p for p in programs if not any(e["program"] == p for e in exact)]
    if exact_pairs and sprogs:
        def geomean(xs):
            return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None
        L.append("## Exact under threads over racy")
        L.append("")
        L.append("Each exact variant over its racy sibling (the same options "
                 "with update=single; gcov-atomic over gcov, clang-atomic over "
                 "clang) in the single-threaded programs: instructions executed "
                 "(valgrind, deterministic) / the median over the timed rounds "
                 "of the variant's run time over the racy variant's in the "
                 "same round (noisy on a busy machine).  *geomean*: over the "
                 "programs with a figure.")
        L.append("")
        L.append("| variant | racy | " + " | ".join(sprogs) + " | geomean |")
        L.append("|---|---|" + "---:|" * (len(sprogs) + 1))
        for v, racy in exact_pairs:
            cells, irs, walls = [], [], []
            for p in sprogs:
                x = None
                if (p, v) in ir and ir.get((p, racy)):
                    x = ir[(p, v)] / ir[(p, racy)]
                    irs.append(x)
                ws = same_round_ratios(by_round, p, v, racy)
                w = statistics.median(ws) if ws else None
                if w is not None:
                    walls.append(w)
                cells.append("%s / %s" % ("%.3f" % x if x is not None else "–",
                                          fmt_ratio(w) if w is not None else "–"))
            gi, gw = geomean(irs), geomean(walls)
            L.append("| %s | %s | %s | %s / %s |" % (
                v, racy, " | ".join(cells),
                "%.3f" % gi if gi is not None else "–",
                fmt_ratio(gw) if gw is not None else "–"))
        L.append("")

    if exact:
        L.append("## Counts under threads")
        L.append("")
        L.append("`threads`: %s threads each call the one-block function "
                 "`bench_hot` the same number of times, so its one counter must "
                 "end at *hot expected*.  `threads-loop`: the threads run one "
                 "loop with a branch (no calls) in one shared function.  For "
                 "both, *expected* is the sum of all counters of a reference run "
                 "of the same build with the same threads run one after another "
                 "(no concurrent updates, so exact even with racy counters), "
                 "*counted* that of the measured run with the threads at once; "
                 "*differing*: functions whose counter sums differ between the "
                 "two.  Variants that must be exact (atomic, any update= but "
                 "single) fail the run otherwise.  *vs plain*: wall time over "
                 "the plain build's; *vs racy*: over the racy (update=single) "
                 "build's of the same profiler, run pairs of the same rounds."
                 % machine_threads(machine))
        L.append("")
        for p in [p for p in programs if any(e["program"] == p for e in exact)]:
            L.append("### %s" % p)
            L.append("")
            L.append("| variant | hot expected | hot counted | expected | counted | lost | differing | exact | vs plain | vs racy |")
            L.append("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
            for e in [e for e in exact if e["program"] == p]:
                want, got = int(e["expected"]), int(e["counted"])
                lost = (want - got) / want * 100 if want else 0.0
                ok = want == got and e["functions_differing"] == "0" and \
                    e["hot_expected"] == e["hot_counted"]
                L.append("| %s | %s | %s | %s | %s | %.2f%% | %s | %s | %s | %s |" % (
                    e["variant"], e["hot_expected"], e["hot_counted"], want, got, lost,
                    e["functions_differing"], "yes" if ok else "**no**",
                    ratio_cell(p, e["variant"]), racy_cell(p, e["variant"], e["racy"])))
            L.append("")

    L.append("## Checks passed")
    L.append("")
    for c in checks:
        L.append("* %s: %s: %s" % (c["program"], c["check"], c["result"]))
    if exact:
        L.append("* threads programs: every variant that must be exact counted exactly")
    L.append("")

    L.append("## Variants")
    L.append("")
    L.append("| variant | base | racy | what | options |")
    L.append("|---|---|---|---|---|")
    for v in variants:
        opts = v["options"].replace("@NAIVE_PROFILE@", "<naive profile>")
        L.append("| %s | %s | %s | %s | %s |" % (v["variant"], v["base"], v.get("racy", "–"),
                                               v["description"], "`%s`" % opts if opts else ""))
    L.append("")
    if chart != "0" and ratios:
        L.append("![run-time ratios](chart.png)")
        L.append("")
    if chart != "0" and iprograms:
        L.append("![instruction ratios](chart-instr.png)")
        L.append("")
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(L))

    # Chart: one cluster per variant, one bar per program (none without a
    # single ratio).
    chart_vars = [v for v in vnames if v != "plain"]
    gp = os.path.join(raw, "chart.gp")
    if os.path.exists(gp):
        os.remove(gp)
    if not ratios and not iprograms:
        return
    instr_plot = ""
    ivars = [v for v in chart_vars if any(ir_ratio(p, v) for p in iprograms)]
    if iprograms and ivars:
        with open(os.path.join(raw, "chart-instr.dat"), "w") as f:
            f.write("# variant " + " ".join(iprograms) + "\n")
            for v in ivars:
                f.write("%s %s\n" % (v, " ".join(
                    "%.4f" % x if x else "-" for x in (ir_ratio(p, v) for p in iprograms))))
        imax = max([ir_ratio(p, v) or 0 for p in iprograms for v in ivars] + [2.0])
        instr_plot = """
set output 'chart-instr.png'
set title "ballarus bench: instructions executed / base build's (valgrind)"
set style histogram clustered gap 1
set yrange [0.5:%g]
unset arrow
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "black" front
plot %s
""" % (imax * 1.15, ", ".join(
            "%s using %d%s title '%s'" % ("'raw/chart-instr.dat'" if i == 0 else "''", 2 + i,
                                         ":xtic(1)" if i == 0 else "", p)
            for i, p in enumerate(iprograms)))
    if not ratios:
        with open(gp, "w") as f:
            f.write("""# gnuplot script written by bench/lib/bench.py; run from the results directory
set terminal pngcairo size %d,720 noenhanced font ",10"
set datafile missing '-'
set style data histogram
set style fill solid 0.75 border -1
set boxwidth 0.9
set logscale y 2
set ytics (0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
set grid ytics
set ylabel "ratio to the base build (log scale)"
set xtics rotate by 30 right scale 0
set key top left
%s""" % (max(900, 60 * len(ivars) * max(1, len(iprograms)) // 2 + 200), instr_plot))
        return
    with open(os.path.join(raw, "chart.dat"), "w") as f:
        f.write("# variant " + " ".join("%s_median %s_min %s_max" % (p, p, p) for p in programs) + "\n")
        for v in chart_vars:
            cols = []
            for p in programs:
                xs = ratios.get((p, v))
                cols += (["%.4f" % statistics.median(xs), "%.4f" % min(xs), "%.4f" % max(xs)]
                         if xs else ["-", "-", "-"])
            f.write("%s %s\n" % (v, " ".join(cols)))
    ymax = max([max(xs) for xs in ratios.values()] + [2.0])
    ymin = min([min(xs) * 0.9 for xs in ratios.values()] + [0.5])
    title = "ballarus bench: run time / base run time (median, min-max over %d run%s)" % (
        nruns, "" if nruns == 1 else "s")
    plot = ", ".join(
        "%s using %d:%d:%d%s title '%s'" % ("'raw/chart.dat'" if i == 0 else "''",
                                           2 + 3 * i, 3 + 3 * i, 4 + 3 * i,
                                           ":xtic(1)" if i == 0 else "", p)
        for i, p in enumerate(programs))
    with open(os.path.join(raw, "chart.gp"), "w") as f:
        f.write("""# gnuplot script written by bench/lib/bench.py; run from the results directory
set terminal pngcairo size %d,720 noenhanced font ",10"
set output 'chart.png'
set title "%s"
set datafile missing '-'
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.75 border -1
set boxwidth 0.9
set logscale y 2
set yrange [%g:%g]
set ytics (0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
set grid ytics
set ylabel "ratio to the base build (log scale)"
set xtics rotate by 30 right scale 0
set key top left
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "black" front
plot %s
%s""" % (max(900, 60 * len(chart_vars) * max(1, len(programs)) // 2 + 200), title,
         ymin, ymax * 1.15, plot, instr_plot))


def main(argv):
    if len(argv) < 2:
        fail(__doc__)
    cmd, args = argv[1], argv[2:]
    if cmd == "ballarus-stats" and len(args) == 1:
        print(totals_line(load_json(args[0]).get("total")))
    elif cmd == "gcov-stats" and len(args) == 1:
        print(totals_line(load_json(args[0]).get("gcov", {}).get("total")))
    elif cmd == "clang-stats" and len(args) == 1:
        funcs = read_profdata_text(args[0])
        print("%d\t%d\t" % (sum(len(v) for v in funcs.values()),
                            sum(sum(v) for v in funcs.values())))
    elif cmd == "ballarus-count" and len(args) == 2:
        fs = [f for f in load_json(args[0]).get("functions", []) if f.get("name") == args[1]]
        if not fs:
            fail("%s: no function %s" % (args[0], args[1]))
        print(sum(f.get("execution_count") or 0 for f in fs))
    elif cmd == "gcov-count" and len(args) == 2:
        fs = [f for f in load_json(args[0]).get("gcov", {}).get("functions", [])
              if f.get("name") == args[1]]
        if len(fs) != 1 or fs[0].get("static_counters") != 1:
            fail("%s: want one function %s with one counter, found %s" % (args[0], args[1], fs))
        print(fs[0]["dynamic_increments"])
    elif cmd == "clang-count" and len(args) == 2:
        funcs = read_profdata_text(args[0])
        vals = [v for k, v in funcs.items() if short_name(k) == args[1]]
        if len(vals) != 1 or len(vals[0]) != 1:
            fail("%s: want one function %s with one counter, found %s" % (args[0], args[1], vals))
        print(vals[0][0])
    elif cmd == "same-counts" and len(args) == 2:
        cmd_same_counts(*args)
    elif cmd == "vector" and len(args) == 2 and args[0] in ("ballarus", "gcov", "clang"):
        cmd_vector(*args)
    elif cmd == "compare-vectors" and len(args) == 2:
        cmd_compare_vectors(*args)
    elif cmd == "cg-functions" and args:
        cmd_cg_functions(args)
    elif cmd == "sizes" and len(args) == 2:
        cmd_sizes(*args)
    elif cmd == "layout" and len(args) >= 3:
        cmd_layout(args[0], args[1], args[2:])
    elif cmd == "report" and len(args) in (2, 3):
        cmd_report(*args)
    else:
        fail("bad arguments: %s\n%s" % (" ".join(argv[1:]), __doc__))


if __name__ == "__main__":
    main(sys.argv)
