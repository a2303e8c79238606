#!/bin/sh
# The scheduler benchmark in its tiny mode: it must run and print its
# figures; make check times nothing.
set -e
"${top_builddir:-.}/tests/bench/bench_sched" --smoke
