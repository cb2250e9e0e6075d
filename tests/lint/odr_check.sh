#!/usr/bin/env bash
# One definition per name: a C++ class or function of namespace seer defined twice with
# different content links silently (inline members become weak symbols and the linker
# keeps one copy, whichever comes first), and which constructor or destructor then runs
# depends on inlining and link order. This check reads the symbol tables of every Seer
# library archive in BUILD_DIR (what the binaries link) and fails when a global seer::
# symbol is
#   - defined strongly (T) in two object files,
#   - defined strongly in one object file and weakly (W, an inline definition) in
#     another (a function cannot be both inline and not).
# (Inline definitions of different sizes are not reported: one inline function compiled
# in two files may legitimately inline its callees differently. Two classes of one name
# with different layouts are SEER_ODR_CHECK's LTO probe's to find.)
# Symbols local to a file (anonymous namespaces, static) are not global and are not read.
# Prints each offending symbol with its object files; exit 1.
set -euo pipefail
build="${1:?usage: odr_check.sh BUILD_DIR}"
mapfile -t archives < <(find "$build" -name 'libseer_*.a' -not -path '*/_deps/*' | sort)
if [ "${#archives[@]}" -eq 0 ]; then
  echo "odr_check: no libseer_*.a under $build" >&2
  exit 1
fi
# nm -A -S: "archive:member:value size type name" (the object is the field before the
# value; symbols without a size have three fields and are skipped).
report=$(for a in "${archives[@]}"; do nm -A -S --defined-only "$a" 2>/dev/null || true; done |
  awk 'NF == 4 && ($3 == "T" || $3 == "W") && $4 ~ /^_ZN[KVRO]*4seer/ {
    obj = $1; sub(/:[0-9a-f]+$/, "", obj); size = $2; type = $3; key = $4
    if (type == "T") { strong[key] = strong[key] " " obj; nstrong[key]++ }
    else {
      weakonly[key] = 1
      if (!(key in wsize)) { wsize[key] = size; wobj[key] = obj }
      else if (wsize[key] != size && !(key in wdiff)) wdiff[key] = wobj[key] " (" size_of(wsize[key]) ") and " obj " (" size_of(size) ")"
    }
    all[key] = all[key] " " obj
  }
  function size_of(hex) { return "0x" hex " B" }
  END {
    for (k in nstrong) {
      if (nstrong[k] > 1) print "defined twice: " k ":" strong[k]
      else if (k in weakonly) print "defined strongly and inline: " k ":" all[k]
    }
  }' | c++filt)
if [ -n "$report" ]; then
  echo "$report" | sort | head -50
  echo "odr_check: two definitions of one name link into the same binaries (see above)" >&2
  exit 1
fi
echo "odr_check: ${#archives[@]} archives, every seer:: definition is unique"
