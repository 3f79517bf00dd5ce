#!/usr/bin/env python3
"""run_suite.py — GCC's own gcov test suite, run against gcov and ballarus.

GCC checks gcov with the programs of gcc/testsuite/gcc.misc-tests/gcov-*.c
and g++.dg/gcov/*.C: each carries `/* count(N) */` annotations that
gcc/testsuite/lib/gcov.exp (verify-lines) compares with the count column of
gcov's .gcov output.  This script runs every `dg-do run` test of that suite

  * plain (its dg-options without the coverage flags): the reference output;
  * as the suite does, with gcov (its dg-options, -fprofile-arcs
    -ftest-coverage), then `gcov ARGS` as its `dg-final { run-gcov ARGS }`
    says, and checks the annotations against the .gcov file exactly as
    verify-lines does (including its per-annotation and per-directive
    xfails);
  * with the ballarus plugin in each mode (naive, edge, path, edge,path; the
    runtime linked), and checks the same annotations against the line
    counts of `ballarus-reconstruct show --json` (the top-level `lines`,
    rendered the way gcov prints a count: `N`, `N*` for a line with an
    unexecuted block, `#####`, `=====` for a line whose blocks are all
    exceptional, `-` for no code, `-H` human-readable numbers), and runs
    `ballarus-reconstruct verify` on the profile;
  * and runs `ballarus-reconstruct gcov` with the very arguments the
    test's `run-gcov` directive gives gcov (`-b gcov-1.c`, `-a gcov-13.c`,
    ...), in the build directory, where each object's profile NAME.bprof
    lies as gcov's NAME.gcda does, and checks the .gcov file it writes as
    gcov.exp checks gcov's: verify-lines, and for `run-gcov branches` /
    `calls` verify-branches / verify-calls (branch and call-return
    percentages).  Every check gcov passes must pass.

A test passes iff its builds succeed, every build's output (stdout, stderr,
exit status) equals the plain build's, gcov passes its checks (all but
those GCC itself marks xfail), ballarus passes, in every mode, every
check gcov passes (in `show --json` and in its own .gcov files), and every
profile verifies — except what EXCEPTIONS
(below) exempts, each with its reason.  KNOWN_FAILURES lists checks
ballarus is known to fail (none today), by cause: they are reported as
known failures and do not fail the run, but one that passes (XPASS) does,
so the list cannot go stale.

Sources: Debian's gcc-12 source package, fetched with `apt-get source
--download-only gcc-12` with deb-src configured in a private directory under
the cache (the machine's apt configuration is untouched; needs root and the
network the first time), cached in ~/.cache/ballarus-gcc-testsuite (or
$BALLARUS_GCC_TESTSUITE_CACHE, or --cache) and never in the repository.  Only
gcc/testsuite/{gcc.misc-tests/gcov*,g++.dg/gcov/*,lib/gcov.exp} are
extracted (from the nested gcc-*-dfsg.tar.xz of the orig tarball).

What is not reproduced from the DejaGnu harness: pytest checks of
gcov's JSON (`run-gcov-pytest`: the program still runs and is checked), and
g++-dg-runtest's loop over -std= versions (each C++ test runs once, with the
compiler's default standard unless its dg-options set one).

  python3 tests/gcc_gcov_suite/run_suite.py [--plugin SO] [--runtime A]
      [--reconstruct BIN] [--cache DIR] [--work DIR] [--mode M]... [--jobs N]
      [--tests GLOB[,GLOB]] [--json FILE] [--no-fetch] [-v]

Defaults are the bazel-bin/ outputs of the repository this script lives in.
Exit status 0 when every test passes (exceptions and known failures aside),
1 when one fails, 2 on bad usage or when the sources cannot be had.
"""

import argparse
import concurrent.futures
import fnmatch
import json
import os
import pwd
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TARGET = "x86_64-pc-linux-gnu"
MODES = ["naive", "edge", "path", "edge,path"]
RUN_TIMEOUT = 120  # seconds per program run
# Flags that ask gcc for gcov's instrumentation or name gcov's library:
# the plain and ballarus builds drop them (-fprofile-abs-path stays: the
# plugin names sources as it says).  -lgcov stays in the plain build (a
# test calling __gcov_dump must link) and goes from the ballarus build,
# whose runtime provides gcov's entry points itself.
COVERAGE_FLAGS = {"-fprofile-arcs", "-ftest-coverage", "--coverage",
                  "-fprofile-generate"}

# Tests, or parts of tests, that have no meaning for ballarus.  Key: test
# name (file name); value: {"what": "annotations" | "test", "why": reason}.
EXCEPTIONS = {
    "gcov-16.C": {
        "what": "annotations",
        "why": "run-gcov remove-gcda: checks what gcov prints when the .gcda "
               "is deleted before it runs (every line #####, from the .gcno); "
               "a ballarus profile holds the notes and the data in one file, "
               "so without it there is nothing to print -- the program still "
               "runs, verifies and must give the plain build's output",
    },
}

# Checks ballarus is known to fail, by cause.  Key: test; value: {kind:
# reason}, kind "annotations" (some annotation), "verify", "build" or
# "output", in any of the modes run.  A known failure that no mode shows any
# more is an error (XPASS): remove it from here when it is fixed.  Empty
# since issue 12's fixes; before them it held gcov-7.c and gcov-pr86536.c
# (verify: setjmp's second return, fork's child), pr86109.C (lambdas),
# pr16855*.C (destructor functions), gcov-13.C, gcov-threads-1.C, ternary.C
# (line flags) and gcov-dump-1/2.C (gcov's API).
KNOWN_FAILURES = {}


def say(*a):
    print("[gcov-suite]", *a, file=sys.stderr, flush=True)


class UsageError(Exception):
    pass


# --------------------------------------------------------------- sources

def default_cache():
    env = os.environ.get("BALLARUS_GCC_TESTSUITE_CACHE")
    if env:
        return env
    # Not $HOME: Bazel points it into the test's temporary directory.
    return os.path.join(pwd.getpwuid(os.getuid()).pw_dir, ".cache",
                        "ballarus-gcc-testsuite")


def apt_private(apt_dir, *args, cwd=None):
    cmd = ["apt-get",
           "-o", "Dir::Etc::SourceList=/dev/null",
           "-o", "Dir::Etc::SourceParts=" + os.path.join(apt_dir, "sources.list.d"),
           "-o", "Dir::State::Lists=" + os.path.join(apt_dir, "lists"),
           "-o", "Dir::Cache=" + os.path.join(apt_dir, "cache"),
           "-o", "APT::Sandbox::User=root"] + list(args)
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise UsageError("%s failed:\n%s" % (" ".join(cmd), r.stdout[-3000:]))


def fetch_sources(cache, allow_fetch):
    """Returns the extracted gcc/testsuite directory (cached)."""
    tsdir = os.path.join(cache, "testsuite")
    stamp = os.path.join(tsdir, ".complete")
    if os.path.exists(stamp):
        return os.path.join(tsdir, "gcc", "testsuite")
    src = os.path.join(cache, "src")
    os.makedirs(src, exist_ok=True)
    origs = sorted(f for f in os.listdir(src)
                   if re.match(r"gcc-12_.*\.orig\.tar\.[a-z]+$", f))
    if not origs:
        if not allow_fetch:
            raise UsageError("no gcc-12 source in %s and --no-fetch given" % src)
        if not shutil.which("apt-get"):
            raise UsageError("fetching Debian's gcc-12 source needs apt-get")
        apt_dir = os.path.join(cache, "apt")
        for d in ("sources.list.d", "lists/partial", "cache/archives/partial"):
            os.makedirs(os.path.join(apt_dir, d), exist_ok=True)
        suite = "bookworm"
        try:
            with open("/etc/os-release") as f:
                m = re.search(r"^VERSION_CODENAME=(\w+)", f.read(), re.M)
                if m:
                    suite = m.group(1)
        except OSError:
            pass
        with open(os.path.join(apt_dir, "sources.list.d", "deb-src.sources"),
                  "w") as f:
            f.write("Types: deb-src\nURIs: http://deb.debian.org/debian\n"
                    "Suites: %s\nComponents: main\n"
                    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
                    % suite)
        say("apt-get update (private deb-src configuration in %s)" % apt_dir)
        apt_private(apt_dir, "update", "-qq")
        say("apt-get source --download-only gcc-12 (about 90 MB)")
        apt_private(apt_dir, "source", "--download-only", "gcc-12", cwd=src)
        origs = sorted(f for f in os.listdir(src)
                       if re.match(r"gcc-12_.*\.orig\.tar\.[a-z]+$", f))
        if not origs:
            raise UsageError("apt-get source gave no gcc-12 orig tarball in " + src)
    orig = os.path.join(src, origs[-1])
    say("extracting the gcov tests from " + os.path.basename(orig))
    tmp = tsdir + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)

    def wanted(name):
        m = re.search(r"(^|/)gcc/testsuite/(.*)$", name)
        if not m:
            return None
        rel = m.group(2)
        if (fnmatch.fnmatch(rel, "gcc.misc-tests/gcov*")
                or fnmatch.fnmatch(rel, "g++.dg/gcov/*")
                or rel == "lib/gcov.exp"):
            return rel
        return None

    def extract_from(tf):
        n = 0
        for member in tf:
            if member.isfile():
                rel = wanted(member.name)
                if rel:
                    out = os.path.join(tmp, "gcc", "testsuite", rel)
                    os.makedirs(os.path.dirname(out), exist_ok=True)
                    with tf.extractfile(member) as fi, open(out, "wb") as fo:
                        shutil.copyfileobj(fi, fo)
                    n += 1
        return n

    n = 0
    with tarfile.open(orig, "r:*") as outer:
        # Debian's orig tarball nests the upstream one (gcc-*-dfsg.tar.xz);
        # an unnested layout is handled too.
        nested = [m for m in outer.getmembers()
                  if re.search(r"/gcc-[0-9.]+(-dfsg)?\.tar\.[a-z]+$", m.name)]
        if nested:
            with outer.extractfile(nested[0]) as inner_f:
                with tarfile.open(fileobj=inner_f, mode="r|*") as inner:
                    n = extract_from(inner)
        else:
            outer_stream = tarfile.open(orig, "r:*")
            n = extract_from(outer_stream)
    if n == 0:
        raise UsageError("no gcov tests found in " + orig)
    with open(os.path.join(tmp, ".complete"), "w") as f:
        f.write("%s\n%d files\n" % (os.path.basename(orig), n))
    shutil.rmtree(tsdir, ignore_errors=True)
    os.rename(tmp, tsdir)
    return os.path.join(tsdir, "gcc", "testsuite")


# --------------------------------------------------------------- DejaGnu

def tcl_words(s):
    """Splits a Tcl list (braces group, nested), enough for dg directives."""
    words, i, n = [], 0, len(s)
    while i < n:
        while i < n and s[i].isspace():
            i += 1
        if i >= n:
            break
        if s[i] == "{":
            depth, j = 1, i + 1
            while j < n and depth:
                depth += {"{": 1, "}": -1}.get(s[j], 0)
                j += 1
            words.append(s[i + 1:j - 1])
            i = j
        elif s[i] == '"':
            j = s.index('"', i + 1)
            words.append(s[i + 1:j])
            i = j + 1
        else:
            j = i
            while j < n and not s[j].isspace():
                j += 1
            words.append(s[i:j])
            i = j
    return words


def target_matches(selector):
    """dg-process-target for what this suite uses: 'xfail PATTERNS...',
    'target PATTERNS...'.  Returns 'S' (selected: applies), 'N' (no)."""
    w = tcl_words(selector)
    if not w:
        return "S"
    kind, pats = w[0], w[1:]
    if len(pats) == 1 and " " in pats[0]:
        pats = pats[0].split()
    # Target triplets are matched; of the effective-target keywords this
    # suite uses, only "native" (true here) is understood.
    hit = any(fnmatch.fnmatch(TARGET, p) if "-" in p else p == "native"
              for p in pats)
    return "S" if hit else "N"


def xfail_of(selector):
    """True when '{ xfail PATTERNS }' selects this target."""
    w = tcl_words(selector)
    return bool(w) and w[0] == "xfail" and target_matches(selector) == "S"


DG_RE = re.compile(r"\{\s*(dg-[\w-]+)(.*)\}\s*(\*/)?\s*$")


class Test:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        self.dir = os.path.dirname(path)
        self.subdir = os.path.join(os.path.basename(os.path.dirname(self.dir)),
                                   os.path.basename(self.dir))
        if self.subdir.startswith("testsuite/"):
            self.subdir = self.subdir[len("testsuite/"):]
        self.cxx = self.name.endswith(".C")
        self.do = None
        self.options = []
        self.sources = [self.name]
        self.gcov_runs = []   # [{"args": [...], "file": F, "xfail": bool,
                              #   "remove_gcda": bool}]
        self.pytest = False
        self.skip = None
        with open(path, errors="replace") as f:
            for line in f:
                m = re.search(r"\{\s*(dg-[\w-]+)\s+(.*)\}", line)
                if not m:
                    continue
                directive, rest = m.group(1), m.group(2)
                words = tcl_words(rest)
                if directive == "dg-do":
                    self.do = words[0]
                    if len(words) > 1 and target_matches(words[1]) == "N":
                        self.skip = "dg-do " + rest
                elif directive == "dg-options":
                    self.options = words[0].split()
                elif directive == "dg-additional-options":
                    if len(words) < 2 or target_matches(words[1]) == "S":
                        self.options += words[0].split()
                elif directive == "dg-additional-sources":
                    self.sources += words[0].split()
                elif directive == "dg-skip-if":
                    if len(words) > 1 and target_matches(
                            "target " + " ".join(tcl_words(words[1]))) == "S":
                        self.skip = "dg-skip-if " + words[0]
                elif directive == "dg-final":
                    fw = tcl_words(words[0])
                    if not fw:
                        continue
                    if fw[0] == "run-gcov":
                        self.gcov_runs.append(parse_run_gcov(fw[1:]))
                    elif fw[0] == "run-gcov-pytest":
                        self.pytest = True


def parse_run_gcov(args):
    run = {"args": [], "xfail": False, "remove_gcda": False,
           "calls": False, "branches": False}
    for a in args:
        if a in ("calls", "branches"):
            run[a] = True
            continue
        if a == "intermediate":
            continue
        if a == "remove-gcda":
            run["remove_gcda"] = True
        elif not run["args"]:
            run["args"] = a.split()
        elif xfail_of(a):
            run["xfail"] = True
    run["file"] = run["args"][-1]
    run["human"] = any(x.startswith("-") and not x.startswith("--")
                       and "H" in x for x in run["args"][:-1])
    return run


ANN_RE = re.compile(r"count\(([0-9\-#=.kMGTPEZY*]+)\)(.*)")


def annotations(path):
    """[(line, expected, xfail)] of a source file, as verify-lines sees them
    (an annotation whose selector rejects this target is dropped)."""
    out = []
    with open(path, errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = ANN_RE.search(line)
            if not m:
                continue
            xf = False
            mr = re.match(r"^ *\{(.*)\}", m.group(2))
            if mr:
                sel = mr.group(1)
                w = tcl_words(sel)
                if w and w[0] == "xfail":
                    xf = target_matches(sel) == "S"
                elif w and w[0] == "target" and target_matches(sel) == "N":
                    continue
            out.append((n, m.group(1), xf))
    return out


def gcov_file_counts(path):
    """{line: count string} of a .gcov file, as verify-lines reads it."""
    counts = {}
    rx = re.compile(r"^ *([^:]*): *([0-9\-#]+):")
    with open(path, errors="replace") as f:
        for line in f:
            m = rx.match(line)
            if m and m.group(2).isdigit():
                counts[int(m.group(2))] = m.group(1).strip()
    return counts


def verify_branches(path):
    """gcov.exp verify-branches: the failures (messages) of a .gcov file's
    `branch(N ...)` / `branch(end)` expectations."""
    fails, shouldbe, n = [], [], "0"
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^[^:]+: *([0-9]+):", line)
            if m:
                n = m.group(1)
            if "branch" not in line:
                continue
            m_new = re.search(r"branch\(([0-9 ]+)\)", line)
            m_neg = re.search(r"branch +[0-9]+ taken (-[0-9]+)%", line)
            m_taken = re.search(r"branch +[0-9]+ taken ([0-9]+)%", line)
            if m_new:
                if shouldbe:
                    fails.append("line %s: expected branch percentages not "
                                 "found: %s" % (n, " ".join(shouldbe)))
                shouldbe = [str(100 - int(x)) if int(x) > 50 else str(int(x))
                            for x in m_new.group(1).split()]
            elif m_neg:
                fails.append("line %s: negative percentage: %s"
                             % (n, m_neg.group(1)))
            elif m_taken:
                taken = int(m_taken.group(1))
                if taken > 100:
                    fails.append("line %s: branch percentage greater than "
                                 "100: %d" % (n, taken))
                if taken > 50:
                    taken = 100 - taken
                if str(taken) in shouldbe:
                    shouldbe.remove(str(taken))
            elif re.search(r"branch\(end\)", line):
                if shouldbe:
                    fails.append("line n: expected branch percentages not "
                                 "found: %s" % " ".join(shouldbe))
                shouldbe = []
    if shouldbe:
        fails.append("line %s: expected branch percentages not found: %s"
                     % (n, " ".join(shouldbe)))
    return fails


def verify_calls(path):
    """gcov.exp verify-calls: the failures of `returns(N ...)` /
    `returns(end)` expectations (percentages above 100 are allowed)."""
    fails, shouldbe, n = [], [], "0"
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^[^:]+: *([0-9]+):", line)
            if m:
                n = m.group(1)
            if "return" not in line:
                continue
            m_new = re.search(r"returns\(([0-9 ]+)\)", line)
            m_neg = re.search(r"call +[0-9]+ returned (-[0-9]+)%", line)
            m_ret = re.search(r"call +[0-9]+ returned ([0-9]+)%", line)
            if m_new:
                if shouldbe:
                    fails.append("line %s: expected return percentages not "
                                 "found: %s" % (n, " ".join(shouldbe)))
                shouldbe = m_new.group(1).split()
            elif m_neg:
                fails.append("line %s: negative percentage: %s"
                             % (n, m_neg.group(1)))
            elif m_ret:
                if m_ret.group(1) in shouldbe:
                    shouldbe.remove(m_ret.group(1))
            elif re.search(r"returns\(end\)", line):
                if shouldbe:
                    fails.append("line %s: expected return percentages not "
                                 "found: %s" % (n, " ".join(shouldbe)))
                shouldbe = []
    if shouldbe:
        fails.append("line %s: expected return percentages not found: %s"
                     % (n, " ".join(shouldbe)))
    return fails


def gcov_checks(run, gfile, ann):
    """The checks gcov.exp makes of one run-gcov's .gcov file: {key: ok}
    for each annotation (verify-lines, key ("line", N)) and the failures of
    verify-branches / verify-calls (key ("branches"|"calls", message));
    plus {key: description} of what failed."""
    counts = gcov_file_counts(gfile)
    ok, why = {}, {}
    for (line, want, _xf) in ann:
        is_ = counts.get(line, "")
        ok[("line", line)] = is_ == want
        if is_ != want:
            why[("line", line)] = "line %d: is %s:should be %s" % (
                line, is_ or "(no data)", want)
    for kind, fn in (("branches", verify_branches), ("calls", verify_calls)):
        if run[kind]:
            fails = fn(gfile)
            ok[(kind, "all")] = not fails
            for msg in fails:
                why.setdefault((kind, "all"), "")
                why[(kind, "all")] += "%s: %s; " % (kind, msg)
    return ok, why


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def format_count(count, human):
    """gcov.cc format_count."""
    if count < 1000 or not human:
        return str(count)
    units = " kMGTPEZY"
    i, divisor = 0, 1
    while units[i + 1:]:
        if count + divisor // 2 < 1000 * divisor:
            break
        i += 1
        divisor *= 1000
    r = f32(f32(float(count)) / f32(float(divisor)))
    return "%.1f%s" % (r, units[i])


def gcov_string(entry, human):
    """What gcov would print for a line of ballarus' top-level `lines`
    (gcov.cc output_line_beginning); None entry = no code ('-')."""
    if entry is None:
        return "-"
    count = entry.get("count") or 0
    if count > 0:
        s = format_count(count, human)
        if entry.get("unexecuted_block"):
            s += "*"
        return s
    return "=====" if entry.get("exceptional") else "#####"


# --------------------------------------------------------------- building

def run_cmd(cmd, cwd, env=None, timeout=600):
    try:
        r = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        return ("timeout", e.stdout or b"", e.stderr or b"")


def q(cmd):
    return " ".join(c if re.match(r"^[\w./=,+:-]+$", c) else repr(c)
                    for c in cmd)


class Ctx:
    def __init__(self, args):
        self.plugin = os.path.abspath(args.plugin)
        self.runtime = os.path.abspath(args.runtime)
        self.reconstruct = os.path.abspath(args.reconstruct)
        self.work = os.path.abspath(args.work)
        self.modes = args.mode or MODES
        self.verbose = args.verbose


def build(ctx, test, kind, mode, wdir):
    """Copies the sources into wdir and builds test.exe: kind plain, gcov or
    ballarus.  Returns (ok, log)."""
    shutil.rmtree(wdir, ignore_errors=True)
    os.makedirs(wdir)
    for f in os.listdir(test.dir):
        if f in test.sources or f.endswith((".h", ".hh", ".hpp")):
            shutil.copy(os.path.join(test.dir, f), wdir)
    cc = "g++" if test.cxx else "gcc"
    opts = list(test.options)
    if kind == "gcov":
        compile_opts = [o for o in opts if not o.startswith("-l")]
        link_opts = opts
        extra_compile, extra_link = [], []
    else:
        keep = [o for o in opts if o not in COVERAGE_FLAGS]
        compile_opts = [o for o in keep if not o.startswith("-l")]
        link_opts = keep if kind == "plain" else [o for o in keep if o != "-lgcov"]
        extra_compile, extra_link = [], []
        if kind == "ballarus":
            extra_compile = ["-fplugin=" + ctx.plugin,
                             "-fplugin-arg-ballarus-mode=" + mode]
            extra_link = [ctx.runtime, "-lpthread",
                          "-Wl,--export-dynamic-symbol=__ballarus_master"]
    log = []
    objs = []
    for s in test.sources:
        obj = os.path.splitext(s)[0] + ".o"
        cmd = [cc] + compile_opts + extra_compile + ["-c", s, "-o", obj]
        rc, out, err = run_cmd(cmd, wdir)
        log.append("$ " + q(cmd) + "\n" + (out + err).decode(errors="replace"))
        if rc != 0:
            return False, "".join(log)
        objs.append(obj)
    cmd = [cc] + objs + link_opts + extra_link + ["-o", "test.exe"]
    rc, out, err = run_cmd(cmd, wdir)
    log.append("$ " + q(cmd) + "\n" + (out + err).decode(errors="replace"))
    return rc == 0, "".join(log)


def run_program(wdir, env_extra=None):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("BALLARUS_", "GCOV_")):
            del env[k]
    env.update(env_extra or {})
    rc, out, err = run_cmd(["./test.exe"], wdir, env=env, timeout=RUN_TIMEOUT)
    return {"status": rc, "stdout": out, "stderr": err}


def same_output(a, b):
    diffs = []
    for k in ("status", "stdout", "stderr"):
        if a[k] != b[k]:
            va, vb = a[k], b[k]
            if isinstance(va, bytes):
                va = va.decode(errors="replace")[-300:]
                vb = vb.decode(errors="replace")[-300:]
            diffs.append("%s %r, plain %r" % (k, va, vb))
    return diffs


# --------------------------------------------------------------- one test

def run_gcov_checks(res, test, gdir, ann):
    """Runs gcov as each run-gcov directive says and makes gcov.exp's checks;
    returns {(run index, check key): True} for the checks gcov passes."""
    gcov_pass = {}
    g = res["gcov"]
    for ri, r in enumerate(test.gcov_runs):
        if r["remove_gcda"]:
            for f in os.listdir(gdir):
                if f.endswith(".gcda"):
                    os.unlink(os.path.join(gdir, f))
        rc, o, e = run_cmd(["gcov"] + r["args"], gdir)
        gfile = os.path.join(gdir, r["file"] + ".gcov")
        if rc != 0 or not os.path.exists(gfile):
            if r["xfail"]:
                g["total"] += len(ann[r["file"]])
                g["xfail"] += len(ann[r["file"]])
            else:
                res["problems"].append(
                    ("gcov", "gcov %s failed: %s" % (
                        " ".join(r["args"]), (o + e).decode(errors="replace"))))
            continue
        gcov_pass[(ri, "ran")] = True
        ok, why = gcov_checks(r, gfile, ann[r["file"]])
        xfails = {("line", line) for (line, _w, xf) in ann[r["file"]] if xf}
        for key, good in ok.items():
            g["total"] += 1
            if good:
                g["passed"] += 1
                gcov_pass[(ri, key)] = True
            elif r["xfail"] or key in xfails:
                g["xfail"] += 1
            else:
                res["problems"].append(
                    ("gcov", "gcov %s %s" % (r["file"], why[key])))
    return gcov_pass


def check_show_json(ctx, res, test, mode, m, profiles, bdir, ann, gcov_pass):
    """The annotations gcov passes against `show --json`'s line counts."""
    rc, o, e = run_cmd([ctx.reconstruct, "show", "--json"] + profiles, bdir)
    if rc != 0:
        res["problems"].append(
            ("annotations:" + mode, "ballarus %s: show --json exit %s: %s"
             % (mode, rc, e.decode(errors="replace")[-2000:])))
        return
    doc = json.loads(o)
    lines = {}
    for entry in doc.get("lines", []):
        lines.setdefault(os.path.basename(entry["file"]), {})[entry["line"]] = entry
    for ri, r in enumerate(test.gcov_runs):
        flines = lines.get(r["file"], {})
        for (line, want, _xf) in ann[r["file"]]:
            if not gcov_pass.get((ri, ("line", line))):
                continue  # gcov itself does not pass it (GCC's xfail)
            m["total"] += 1
            is_ = gcov_string(flines.get(line), r["human"])
            if is_ == want:
                m["passed"] += 1
            else:
                m["failures"].append("%s:%d is %s, should be %s"
                                     % (r["file"], line, is_, want))
    if m["failures"]:
        res["problems"].append(
            ("annotations:" + mode, "ballarus %s: %s"
             % (mode, "; ".join(m["failures"]))))


def source_line(path, build_dir):
    """The `0:Source:` line of a .gcov file, its build directory as @DIR."""
    with open(path, errors="replace") as f:
        for line in f:
            if re.match(r"^ *-: *0:Source:", line):
                return line.strip().replace(build_dir, "@DIR")
    return None


def check_gcov_runs(ctx, res, test, mode, m, bdir, gdir, ann, gcov_pass):
    """Runs `ballarus-reconstruct gcov` with each run-gcov directive's own
    arguments in the build directory (where the .bprof files lie, as gcov's
    .gcda would) and requires every gcov.exp check gcov passes."""
    fails = []
    for ri, r in enumerate(test.gcov_runs):
        if r["remove_gcda"]:
            for f in os.listdir(bdir):
                if f.endswith(".bprof"):
                    os.unlink(os.path.join(bdir, f))
        if not gcov_pass.get((ri, "ran")):
            continue  # gcov itself fails this run (GCC's xfail)
        wanted = [k for (i, k) in gcov_pass if i == ri and k != "ran"]
        m["gcov_total"] += len(wanted)
        rc, o, e = run_cmd([ctx.reconstruct, "gcov"] + r["args"], bdir)
        gfile = os.path.join(bdir, r["file"] + ".gcov")
        if rc != 0 or not os.path.exists(gfile):
            fails.append("gcov %s: exit %s, %s.gcov %s: %s" % (
                " ".join(r["args"]), rc, r["file"],
                "written" if os.path.exists(gfile) else "not written",
                (o + e).decode(errors="replace")[-1000:]))
            continue
        ok, why = gcov_checks(r, gfile, ann[r["file"]])
        # Beyond gcov.exp: the source is named as gcov names it (an
        # absolute name, -fprofile-abs-path, in its own build directory).
        want_src = source_line(os.path.join(gdir, r["file"] + ".gcov"), gdir)
        if source_line(gfile, bdir) != want_src:
            fails.append("gcov %s: %s, gcov's %s" % (
                " ".join(r["args"]), source_line(gfile, bdir), want_src))
        for key in wanted:
            if ok.get(key):
                m["gcov_passed"] += 1
            else:
                fails.append("gcov %s: %s" % (" ".join(r["args"]),
                                              why.get(key, key)))
    m["gcov_failures"] = fails
    if fails:
        res["problems"].append(("gcov-file:" + mode, "ballarus %s: %s"
                                % (mode, "; ".join(fails))))


def run_mode(ctx, res, test, mode, base, plain, ann, gcov_pass):
    """Builds, runs and checks the test in one ballarus mode."""
    m = {"passed": 0, "total": 0, "gcov_passed": 0, "gcov_total": 0,
         "verify": None, "output": None, "build": None, "failures": []}
    res["modes"][mode] = m
    bdir = os.path.join(base, "ballarus-" + mode.replace(",", "+"))
    ok, log = build(ctx, test, "ballarus", mode, bdir)
    m["build"] = ok
    if not ok:
        res["problems"].append(("build:" + mode, "ballarus %s build failed:\n%s"
                                % (mode, log[-4000:])))
        return
    # Each object's counts go to its default place, NAME.bprof beside it,
    # as gcov's go to NAME.gcda.
    out = run_program(bdir)
    d = same_output(out, plain)
    m["output"] = not d
    if d:
        res["problems"].append(("output:" + mode,
                                "ballarus %s: %s" % (mode, "; ".join(d))))
    profiles = sorted(f for f in os.listdir(bdir) if f.endswith(".bprof"))
    if not profiles:
        m["verify"] = False
        res["problems"].append(("verify:" + mode,
                                "ballarus %s: no profile written" % mode))
        return
    rc, o, e = run_cmd([ctx.reconstruct, "verify"] + profiles, bdir)
    m["verify"] = rc == 0
    if rc != 0:
        res["problems"].append(
            ("verify:" + mode, "ballarus %s: verify exit %s:\n%s"
             % (mode, rc, (o + e).decode(errors="replace")[-3000:])))
    if EXCEPTIONS.get(test.name, {}).get("what") == "annotations":
        return
    check_show_json(ctx, res, test, mode, m, profiles, bdir, ann, gcov_pass)
    check_gcov_runs(ctx, res, test, mode, m, bdir,
                    os.path.join(base, "gcov"), ann, gcov_pass)


def run_test(ctx, test):
    """Returns the result record of one test."""
    t0 = time.time()
    res = {"test": test.name, "dir": os.path.basename(test.dir),
           "annotations": 0, "gcov": {}, "modes": {}, "problems": [],
           "notes": []}
    base = os.path.join(ctx.work, test.subdir.replace("/", "-"), test.name)

    # Annotations of every file a run-gcov directive reports on.
    ann = {}
    for r in test.gcov_runs:
        ann[r["file"]] = annotations(os.path.join(test.dir, r["file"]))
    res["annotations"] = sum(len(v) for v in ann.values())

    pdir = os.path.join(base, "plain")
    ok, log = build(ctx, test, "plain", None, pdir)
    if not ok:
        res["problems"].append(("build:plain", "plain build failed:\n" + log))
        res["seconds"] = time.time() - t0
        return res
    plain = run_program(pdir)

    gdir = os.path.join(base, "gcov")
    res["gcov"].update(passed=0, total=0, xfail=0)
    gcov_pass = {}
    ok, log = build(ctx, test, "gcov", None, gdir)
    if not ok:
        res["problems"].append(("build:gcov", "gcov build failed:\n" + log))
    else:
        d = same_output(run_program(gdir), plain)
        if d:
            res["problems"].append(("output:gcov", "gcov build: " + "; ".join(d)))
        gcov_pass = run_gcov_checks(res, test, gdir, ann)

    for mode in ctx.modes:
        run_mode(ctx, res, test, mode, base, plain, ann, gcov_pass)
    if test.name in EXCEPTIONS:
        res["notes"].append("exception (%s): %s" % (
            EXCEPTIONS[test.name]["what"], EXCEPTIONS[test.name]["why"]))
    res["seconds"] = time.time() - t0
    return res


# --------------------------------------------------------------- report

def classify(res):
    """Splits a result's problems into failures, known failures and XPASSes."""
    known = KNOWN_FAILURES.get(res["test"], {})
    fails, xfails = [], []
    seen = set()
    for check, text in res["problems"]:
        kind = check.split(":")[0]
        seen.add(kind)
        if kind in known:
            xfails.append((check, text, known[kind]))
        else:
            fails.append((check, text))
    xpass = [(k, why) for k, why in known.items() if k not in seen]
    return fails, xfails, xpass


def print_table(ctx, results, skipped):
    """Prints the per-test table and the failures; returns (failures,
    known failures, XPASSes) counted by test."""
    hdr = ["test", "ann", "gcov"] + ctx.modes + ["verify", "output", "result"]
    rows = []
    n_fail = n_xfail = n_xpass = 0
    details = []
    for r in results:
        fails, xfails, xpass = classify(r)
        g = r["gcov"]
        row = [r["test"], str(r["annotations"]),
               "%d/%d" % (g.get("passed", 0), g.get("total", 0))
               + ("" if not g.get("xfail") else " (%d xf)" % g["xfail"])]
        ver, outp = [], []
        for mode in ctx.modes:
            m = r["modes"].get(mode)
            if not m or not m["build"]:
                row.append("no build")
                ver.append("-")
                outp.append("-")
                continue
            row.append("%d/%d %d/%d" % (m["passed"], m["total"],
                                        m["gcov_passed"], m["gcov_total"]))
            ver.append({True: "ok", False: "FAIL", None: "-"}[m["verify"]])
            outp.append({True: "ok", False: "DIFF", None: "-"}[m["output"]])
        row.append("/".join(ver))
        row.append("/".join(outp))
        if fails:
            verdict = "FAIL"
            n_fail += 1
        elif xpass:
            verdict = "XPASS"
            n_xpass += 1
        elif xfails:
            verdict = "xfail"
            n_xfail += 1
        else:
            verdict = "ok"
        if r["test"] in EXCEPTIONS:
            verdict += " (exc)"
        row.append(verdict)
        rows.append(row)
        for check, text in fails:
            details.append("FAIL %s [%s]: %s" % (r["test"], check, text))
        for check, why in xpass:
            details.append("XPASS %s [%s]: listed as a known failure (%s) but "
                           "passes: remove it from KNOWN_FAILURES"
                           % (r["test"], check, why))
        for check, text, why in xfails:
            details.append("known %s [%s] (%s)%s" % (
                r["test"], check, why, (": " + text) if ctx.verbose else ""))
    widths = [max(len(hdr[i]), *(len(row[i]) for row in rows))
              for i in range(len(hdr))]
    fmt = "  ".join("%%-%ds" % w for w in widths)
    print(fmt % tuple(hdr))
    print(fmt % tuple("-" * w for w in widths))
    for row in rows:
        print(fmt % tuple(row))
    print()
    for d in details:
        print(d)
    if details:
        print()
    for f, why in skipped:
        print("not run: %s (%s)" % (f, why))
    for name, e in sorted(EXCEPTIONS.items()):
        print("exception: %s (%s): %s" % (name, e["what"], e["why"]))
    print()
    return n_fail, n_xfail, n_xpass


def print_summary(ctx, results):
    """Prints the totals of gcov and of each ballarus mode."""
    g_pass = sum(r["gcov"].get("passed", 0) for r in results)
    g_tot = sum(r["gcov"].get("total", 0) for r in results)
    g_xf = sum(r["gcov"].get("xfail", 0) for r in results)
    annotated = [r for r in results if r["annotations"]]
    print("gcov: %d/%d checks pass (annotations, branch and return "
          "percentages; %d xfail as GCC expects), in %d annotated tests"
          % (g_pass, g_tot, g_xf, len(annotated)))
    for mode in ctx.modes:
        ms = [r["modes"].get(mode) for r in results]
        ms_ok = [m for m in ms if m and m["build"]]
        a_pass = sum(m["passed"] for m in ms_ok)
        a_tot = sum(m["total"] for m in ms_ok)
        f_pass = sum(m["gcov_passed"] for m in ms_ok)
        f_tot = sum(m["gcov_total"] for m in ms_ok)
        tests_ok = sum(1 for r in annotated
                       if r["modes"].get(mode) and r["modes"][mode]["build"]
                       and not r["modes"][mode]["failures"]
                       and not r["modes"][mode].get("gcov_failures")
                       and r["test"] not in EXCEPTIONS)
        n_ann = sum(1 for r in annotated if r["test"] not in EXCEPTIONS)
        print("ballarus %-9s: builds %d/%d; annotations %d/%d (of those gcov "
              "passes; %d/%d annotated tests all pass); its own gcov: "
              "%d/%d checks; verify %d/%d; output equal %d/%d"
              % (mode, len(ms_ok), len(ms), a_pass, a_tot, tests_ok, n_ann,
                 f_pass, f_tot,
                 sum(1 for m in ms_ok if m["verify"]), len(ms),
                 sum(1 for m in ms_ok if m["output"]), len(ms)))


def main():
    ap = argparse.ArgumentParser(
        description="GCC's gcov test suite against gcov and ballarus "
                    "(see the header of this script).")
    bb = os.path.join(ROOT, "bazel-bin")
    ap.add_argument("--plugin", default=os.path.join(bb, "plugin", "ballarus.so"))
    ap.add_argument("--runtime", default=os.path.join(
        bb, "runtime", "archive", "libballarus_rt.a"))
    ap.add_argument("--reconstruct", default=os.path.join(
        bb, "reconstruct", "ballarus-reconstruct"))
    ap.add_argument("--cache", default=default_cache())
    ap.add_argument("--work", default=None,
                    help="build directory (default CACHE/work), emptied first")
    ap.add_argument("--mode", action="append", choices=MODES,
                    help="ballarus mode (repeatable; default all of %s)" % MODES)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--tests", default="*", help="comma-separated name globs")
    ap.add_argument("--json", help="write the results as JSON")
    ap.add_argument("--no-fetch", action="store_true",
                    help="never download (the sources must be cached)")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print every failure's details, known ones too")
    args = ap.parse_args()
    if args.work is None:
        args.work = os.path.join(args.cache, "work")
    for what in ("plugin", "runtime", "reconstruct"):
        if not os.path.exists(getattr(args, what)):
            print("run_suite.py: %s not found: %s (bazel build first)"
                  % (what, getattr(args, what)), file=sys.stderr)
            return 2
    for tool in ("gcc", "g++", "gcov"):
        if not shutil.which(tool):
            print("run_suite.py: %s not on PATH" % tool, file=sys.stderr)
            return 2
    t_start = time.time()
    try:
        ts = fetch_sources(args.cache, not args.no_fetch)
    except UsageError as e:
        print("run_suite.py: " + str(e), file=sys.stderr)
        return 2
    t_fetched = time.time()
    ctx = Ctx(args)
    shutil.rmtree(ctx.work, ignore_errors=True)
    os.makedirs(ctx.work)

    globs = args.tests.split(",")
    tests, skipped = [], []
    for sub, pat in (("gcc.misc-tests", "gcov-*.c"), ("g++.dg/gcov", "*.C")):
        d = os.path.join(ts, sub)
        for f in sorted(os.listdir(d)):
            if not fnmatch.fnmatch(f, pat):
                continue
            if not any(fnmatch.fnmatch(f, gl) for gl in globs):
                continue
            t = Test(os.path.join(d, f))
            if t.do != "run":
                skipped.append((f, "dg-do %s" % t.do if t.do else
                                "no dg-do: an additional source of another test"))
            elif t.skip:
                skipped.append((f, t.skip))
            else:
                tests.append(t)
    if not tests:
        print("run_suite.py: no test matches --tests " + args.tests,
              file=sys.stderr)
        return 2
    say("%d tests (%d not dg-do run), modes %s, %d jobs, work %s"
        % (len(tests), len(skipped), ", ".join(ctx.modes), args.jobs, ctx.work))

    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = {ex.submit(run_test, ctx, t): t for t in tests}
        for fu in concurrent.futures.as_completed(futs):
            r = fu.result()
            results.append(r)
            if ctx.verbose:
                say("%s done (%.1f s)" % (r["test"], r["seconds"]))
    order = {t.name: i for i, t in enumerate(tests)}
    results.sort(key=lambda r: order[r["test"]])

    n_fail, n_xfail, n_xpass = print_table(ctx, results, skipped)
    print_summary(ctx, results)
    t_end = time.time()
    print("%d tests: %d ok, %d known failures, %d FAIL, %d XPASS; %.0f s "
          "(sources %.0f s, tests %.0f s)"
          % (len(results), len(results) - n_fail - n_xfail - n_xpass, n_xfail,
             n_fail, n_xpass, t_end - t_start, t_fetched - t_start,
             t_end - t_fetched))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "skipped": skipped}, f, indent=1,
                      default=lambda o: o.decode(errors="replace")
                      if isinstance(o, bytes) else str(o))
    return 1 if (n_fail or n_xpass) else 0


if __name__ == "__main__":
    sys.exit(main())
