#!/bin/sh
# Runs every program in testdata/ under CPython 3.13.0 and records its
# trace in testdata/<name>.trace (the tests' expected output). Check the
# diff before committing: a change means CPython's behaviour differs from
# what the ports were written against.
set -eu
cd "$(dirname "$0")/testdata"
for f in p[0-9]*.py; do
	PYENV_VERSION=${PYENV_VERSION:-3.13.0} python3 -B "$f" >"${f%.py}.trace"
done
