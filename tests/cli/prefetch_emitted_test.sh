#!/usr/bin/env bash
# The index searches that ask for a node's cache lines before probing it
# (core/common/prefetch.h) must still do so in the built binary: GCC 12
# deleted a plain __builtin_prefetch loop from Cell's Store::descend, and
# the release build ran without it (2026-11-29; docs/results.md, "Cell's
# server-side search"). Disassembles each function and requires a
# prefetcht0 in it. x86-64 only (elsewhere the builtin is used and the
# check is skipped). CMake registers it for optimised builds only.
set -uo pipefail
locus=$1
if [[ $(uname -m) != x86_64 ]]; then echo "skip: not x86-64"; exit 77; fi
if ! command -v objdump >/dev/null || ! command -v nm >/dev/null; then echo "skip: no binutils"; exit 77; fi
fail=0
# Mangled and demangled names side by side (nm lists them in one order).
symbols=$(paste -d '\t' <(nm "$locus" | awk '{print $NF}') <(nm -C "$locus" | cut -c20-))
for fn in 'locus::cell::Store::descend(' 'locus::nam::BlinkTree::lookup_in_place(' 'locus::catfish::Store::search('; do
  sym=$(awk -F '\t' -v fn="$fn" 'index($2, fn) == 1 { print $1; exit }' <<<"$symbols")
  if [[ -z $sym ]]; then echo "FAIL: no function $fn in $locus"; fail=1; continue; fi
  n=$(objdump -d --no-show-raw-insn "--disassemble=$sym" "$locus" | grep -c prefetcht0)
  if [[ $n -eq 0 ]]; then echo "FAIL: $fn has no prefetcht0"; fail=1; else echo "ok: $fn: $n prefetcht0"; fi
done
exit $fail
