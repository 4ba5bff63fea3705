#!/bin/sh
# Runs every program in testdata/ under CPython 3.13.0 and records its
# trace in testdata/<name>.out (the tests' expected output). Check the
# diff before committing: a change means CPython's behaviour differs from
# what the ports were written against.
set -eu
cd "$(dirname "$0")/testdata"
for f in p*.py; do
	PYENV_VERSION=${PYENV_VERSION:-3.13.0} python3 "$f" >"${f%.py}.out"
done
