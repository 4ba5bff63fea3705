#!/usr/bin/env python3
"""Generate docs/cpython-tests.md: every test method of the ported CPython
test_asyncio files and its status in tests/cpython.

The list of methods comes from the CPython 3.13 sources themselves (parsed,
not imported), so none is missed: the directory that pyenv's CPython 3.13
prints for

    python3 -c 'import test.test_asyncio, os; print(os.path.dirname(test.test_asyncio.__file__))'

(or $CPYTHON_TEST_ASYNCIO). CPython 3.14's test_graph.py and test_tools.py
(asyncio.graph and `python -m asyncio ps/pstree`, new in 3.14) are not in
those sources: their methods are listed below (METHODS_314), as 3.14.0 has
them. A method's status is

  pass            a Go test of that name exists in tests/cpython (and CI runs
                  it: `go test ./tests/cpython`);
  divergence      listed in tests/cpython/reasons.tsv with the key of a row of
                  the README's divergence table (checked) and a reason; a Go
                  test of that name may exist and then checks the Go behaviour;
  not applicable  listed in reasons.tsv with a reason; no Go test may exist;
  pending         listed in reasons.tsv (work that waits for another issue);
  missing         none of these: an error in --check mode.

Go test names: Test<File>_<method>, or Test<File>_<Class>_<method> when the
method name occurs in more than one class of the file. A method defined in a
base class (run by CPython once per C/Python variant) is one row.

    scripts/cpython-tests.py            write docs/cpython-tests.md
    scripts/cpython-tests.py --check    exit 1 if it is out of date, if a
                                        method has no status, if a Go test or
                                        a reason names no method, or if fewer
                                        than 98 % of the applicable methods pass
"""

import argparse
import ast
import fnmatch
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GO_DIR = os.path.join(ROOT, "tests", "cpython")
REASONS = os.path.join(GO_DIR, "reasons.tsv")
README = os.path.join(ROOT, "README.md")
OUT = os.path.join(ROOT, "docs", "cpython-tests.md")
MIN_PASS = 98.0

# CPython file -> the prefix of its Go test names (its Go file is
# tests/cpython/<file without test_>_test.go).
FILES = [
    ("test_taskgroups.py", "TaskGroups"),
    ("test_timeouts.py", "Timeouts"),
    ("test_waitfor.py", "WaitFor"),
    ("test_locks.py", "Locks"),
    ("test_queues.py", "Queues"),
    ("test_futures.py", "Futures"),
    ("test_futures2.py", "Futures2"),
    ("test_tasks.py", "Tasks"),
    ("test_runners.py", "Runners"),
    ("test_streams.py", "Streams"),
    ("test_server.py", "Server"),
    ("test_sock_lowlevel.py", "SockLowlevel"),
    ("test_eager_task_factory.py", "EagerTaskFactory"),
    ("test_subprocess.py", "Subprocess"),
    ("test_graph.py", "Graph"),
    ("test_tools.py", "Tools"),
    ("test_buffered_proto.py", "BufferedProto"),
    ("test_threads.py", "Threads"),
    ("test_sendfile.py", "Sendfile"),
    ("test_staggered.py", "Staggered"),
    ("test_ssl.py", "SSL"),
    ("test_sslproto.py", "SSLProto"),
    ("test_base_events.py", "BaseEvents"),
    ("test_events.py", "Events"),
    ("test_protocols.py", "Protocols"),
    ("test_transports.py", "Transports"),
]

# The test methods of the CPython 3.14 files, which the 3.13 sources do not
# have: (class, method) in the order of the file. test_graph.py's are those
# of CallStackTestBase (run by TestCallStackC and TestCallStackPy).
METHODS_314 = {
    "test_graph.py": [("CallStackTestBase", m) for m in (
        "test_stack_tgroup", "test_stack_async_gen", "test_stack_gather", "test_stack_shield",
        "test_stack_timeout", "test_stack_wait", "test_stack_task", "test_stack_future")],
    "test_tools.py": [
        ("TestAsyncioToolsTree", "test_asyncio_utils"),
        ("TestAsyncioToolsTree", "test_asyncio_utils_cycles"),
        ("TestAsyncioToolsTable", "test_asyncio_utils"),
    ] + [("TestAsyncioToolsBasic", m) for m in (
        "test_empty_input_tree", "test_empty_input_table", "test_only_independent_tasks_tree",
        "test_only_independent_tasks_table", "test_single_task_tree", "test_single_task_table",
        "test_cycle_detection", "test_complex_tree", "test_complex_table", "test_deep_coroutine_chain",
        "test_multiple_cycles_same_node", "test_table_output_format")
    ] + [("TestAsyncioToolsEdgeCases", m) for m in (
        "test_task_awaits_self", "test_task_with_missing_awaiter_id", "test_duplicate_coroutine_frames",
        "test_task_with_no_name", "test_tree_rendering_with_custom_emojis")],
}

STATUS_WORDS = {"divergence", "n/a", "pending"}


def python313():
    """CPython 3.13 from pyenv (the shims are not on PATH inside a pyenv
    exec of another version, so look in the versions directory)."""
    root = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip() \
        or os.path.expanduser("~/.pyenv")
    for py in sorted(glob.glob(os.path.join(root, "versions", "3.13*", "bin", "python3"))):
        if os.access(py, os.X_OK):
            return py
    sys.exit("cpython-tests: no CPython 3.13 under %s/versions (set CPYTHON_TEST_ASYNCIO)" % root)


def cpython_dir():
    d = os.environ.get("CPYTHON_TEST_ASYNCIO")
    if d:
        return d
    out = subprocess.run(
        [python313(), "-c", "import test.test_asyncio, os, sys; "
         "print(os.path.dirname(test.test_asyncio.__file__)); print(sys.version.split()[0])"],
        capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("cpython-tests: cannot find CPython's test_asyncio (set CPYTHON_TEST_ASYNCIO):\n"
                 + out.stderr)
    d, version = out.stdout.split()
    if not version.startswith("3.13."):
        sys.exit("cpython-tests: %s is CPython %s, want 3.13" % (d, version))
    return d


def methods_of(path):
    """[(class, method, line)] for every test method of a CPython file: the
    methods of top-level classes, and test functions that a top-level
    function attaches to classes (add_subclass_tests in test_tasks.py)."""
    tree = ast.parse(open(path).read(), path)
    rows = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test"):
                    rows.append((node.name, m.name, m.lineno))
        elif isinstance(node, ast.FunctionDef):
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test"):
                    rows.append((node.name, m.name, m.lineno))
    return rows


def go_name(prefix, cls, meth, counts):
    if counts[meth] > 1:
        return "Test%s_%s_%s" % (prefix, cls, meth)
    return "Test%s_%s" % (prefix, meth)


def go_tests():
    """{name: file} for every func TestX(t *testing.T) in tests/cpython."""
    found = {}
    if not os.path.isdir(GO_DIR):
        return found
    for fn in sorted(os.listdir(GO_DIR)):
        if not fn.endswith("_test.go"):
            continue
        for line in open(os.path.join(GO_DIR, fn)):
            m = re.match(r"func (Test\w+)\(t \*testing\.T\)", line)
            if m:
                found[m.group(1)] = fn
    return found


def divergence_keys():
    """First cells of the README's divergence table."""
    text = open(README).read()
    start = text.index("## Where Go differs from asyncio")
    keys = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        if line.startswith("| ") and not line.startswith("| asyncio |") and not line.startswith("|---"):
            keys.append(line.split(" | ")[0][2:])
    return keys


def read_reasons():
    """[(file, pattern, status, key, reason, line)] from reasons.tsv."""
    rows = []
    for n, line in enumerate(open(REASONS), 1):
        line = line.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) == 4:
            parts.insert(3, "")
        if len(parts) != 5 or parts[2] not in STATUS_WORDS:
            sys.exit("%s:%d: want FILE<TAB>TEST<TAB>divergence|n/a|pending<TAB>[README KEY]<TAB>REASON"
                     % (REASONS, n))
        f, pat, status, key, reason = parts
        if status == "divergence" and not key:
            sys.exit("%s:%d: a divergence names the README row (4th column)" % (REASONS, n))
        rows.append((f, pat, status, key, reason, n))
    return rows


def build(check):
    src = cpython_dir()
    tests = go_tests()
    reasons = read_reasons()
    keys = divergence_keys()
    problems = []
    used_tests, used_reasons = set(), set()
    per_file = []
    for fname, prefix in FILES:
        if fname in METHODS_314:
            rows = [(cls, meth, 0) for cls, meth in METHODS_314[fname]]
        else:
            rows = methods_of(os.path.join(src, fname))
        counts = {}
        for _, m, _ in rows:
            counts[m] = counts.get(m, 0) + 1
        out = []
        for cls, meth, line in rows:
            name = go_name(prefix, cls, meth, counts)
            match = None
            for r in reasons:
                if r[0] == fname and (fnmatch.fnmatchcase(meth, r[1]) or fnmatch.fnmatchcase(cls + "." + meth, r[1])):
                    match = r
                    break
            has_go = name in tests
            if has_go:
                used_tests.add(name)
            if match:
                used_reasons.add(match[5])
                status, key, reason = match[2], match[3], match[4]
                if status == "n/a" and has_go:
                    problems.append("%s: %s is 'not applicable' (reasons.tsv:%d) but has a Go test" % (fname, name, match[5]))
                if status == "pending" and has_go:
                    problems.append("%s: %s is 'pending' (reasons.tsv:%d) but has a Go test" % (fname, name, match[5]))
                if status == "divergence":
                    if not any(key in k for k in keys):
                        problems.append("reasons.tsv:%d: no README divergence row contains %r" % (match[5], key))
            elif has_go:
                status, key, reason = "pass", "", ""
            else:
                status, key, reason = "missing", "", ""
                problems.append("%s: %s.%s has neither a Go test %s nor a reason" % (fname, cls, meth, name))
            out.append((cls, meth, line, name, status, key, reason, tests.get(name)))
        per_file.append((fname, prefix, out))
    for name in sorted(set(tests) - used_tests):
        problems.append("tests/cpython/%s: %s names no CPython test method" % (tests[name], name))
    for r in reasons:
        if r[5] not in used_reasons:
            problems.append("reasons.tsv:%d: %s %s matches no test method" % (r[5], r[0], r[1]))
    return src, per_file, problems


STATUS_TEXT = {"pass": "pass", "divergence": "divergence", "n/a": "not applicable",
               "pending": "pending", "missing": "**missing**"}


def render(per_file):
    lines = []
    w = lines.append
    w("# CPython's test_asyncio, ported")
    w("")
    w("<!-- Generated by scripts/cpython-tests.py from the CPython 3.13 sources (and its list of 3.14")
    w("     methods), the Go tests in tests/cpython and tests/cpython/reasons.tsv. Do not edit; run the script. -->")
    w("")
    w("Every test method of these files of CPython 3.13's `Lib/test/test_asyncio` (and of CPython 3.14's")
    w("`test_graph.py` and `test_tools.py`, for `asyncio.graph` and `python -m asyncio ps/pstree`), and its status here.")
    w("*pass*: `tests/cpython/<file>_test.go` has a Go test of the name shown, which checks what the")
    w("CPython test checks, through the public API, with the same inputs and expected outcome (virtual")
    w("time where CPython sleeps). *divergence*: Go differs on purpose; the reason names the row of the")
    w("[README's divergence table](../README.md#where-go-differs-from-asyncio). *not applicable*: the test")
    w("checks something that has no counterpart here (the reason says what). *pending*: waits for")
    w("another piece of work. A method that CPython runs once per C and Python variant is one row.")
    w("")
    w("| file | methods | pass | divergence | not applicable | pending | pass / applicable |")
    w("|---|---:|---:|---:|---:|---:|---:|")
    tot = {"all": 0, "pass": 0, "divergence": 0, "n/a": 0, "pending": 0, "missing": 0}
    for fname, prefix, rows in per_file:
        c = {k: sum(1 for r in rows if r[4] == k) for k in tot if k != "all"}
        applicable = len(rows) - c["n/a"] - c["pending"]
        pct = "%.0f %%" % (100.0 * c["pass"] / applicable) if applicable else "-"
        anchor = fname.replace(".", "")
        w("| [%s](#%s) | %d | %d | %d | %d | %d | %s |" % (
            fname, anchor, len(rows), c["pass"], c["divergence"], c["n/a"], c["pending"], pct))
        tot["all"] += len(rows)
        for k in c:
            tot[k] += c[k]
    applicable = tot["all"] - tot["n/a"] - tot["pending"]
    w("| **all** | %d | %d | %d | %d | %d | %.1f %% |" % (
        tot["all"], tot["pass"], tot["divergence"], tot["n/a"], tot["pending"],
        100.0 * tot["pass"] / applicable if applicable else 0))
    if tot["missing"]:
        w("")
        w("**%d methods have no status yet.**" % tot["missing"])
    for fname, prefix, rows in per_file:
        w("")
        w("## %s" % fname)
        w("")
        if not rows:
            w("(no test methods)")
            continue
        w("| CPython test | Go test | status | reason |")
        w("|---|---|---|---|")
        for cls, meth, line, name, status, key, reason, gofile in rows:
            gocell = "`%s`" % name if gofile else ""
            text = reason
            if status == "divergence":
                text = "%s ([README: %s](../README.md#where-go-differs-from-asyncio))" % (reason, key)
            w("| `%s.%s` | %s | %s | %s |" % (cls, meth, gocell, STATUS_TEXT[status], text.replace("|", "\\|")))
    w("")
    return "\n".join(lines), tot, applicable


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    _, per_file, problems = build(args.check)
    text, tot, applicable = render(per_file)
    pct = 100.0 * tot["pass"] / applicable if applicable else 0.0
    if args.check:
        ok = True
        if not os.path.exists(OUT) or open(OUT).read() != text:
            print("cpython-tests: docs/cpython-tests.md is out of date: run scripts/cpython-tests.py")
            ok = False
        for p in problems:
            print("cpython-tests:", p)
            ok = False
        if pct < MIN_PASS:
            print("cpython-tests: %.1f %% of the applicable methods pass, want >= %.0f %%" % (pct, MIN_PASS))
            ok = False
        print("cpython-tests: %d methods, %d pass, %d divergence, %d not applicable, %d pending, %d missing; %.1f %% of the applicable pass"
              % (tot["all"], tot["pass"], tot["divergence"], tot["n/a"], tot["pending"], tot["missing"], pct))
        return 0 if ok else 1
    with open(OUT, "w") as fh:
        fh.write(text)
    for p in problems:
        print("cpython-tests:", p, file=sys.stderr)
    print("cpython-tests: wrote %s: %d methods, %d pass, %d divergence, %d not applicable, %d pending, %d missing; %.1f %% of the applicable pass"
          % (os.path.relpath(OUT, ROOT), tot["all"], tot["pass"], tot["divergence"], tot["n/a"],
             tot["pending"], tot["missing"], pct))
    return 0


if __name__ == "__main__":
    sys.exit(main())
