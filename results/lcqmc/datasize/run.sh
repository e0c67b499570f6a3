#!/usr/bin/env bash
# The data-size study's runs (PLAN.md), one `lessons experiment` command and one results file per
# (fraction, arm, seed), two at a time, one torch thread each. A file that exists is never made
# again; an interrupted run resumes from its last epoch's checkpoint under $WORK. Run it again to go
# on after an interruption: it does only what is missing.
#
#   LCQMC=/path/to/lcqmc CACHE=/path/to/parse-cache WORK=/path/to/checkpoints \
#       bash results/lcqmc/datasize/run.sh [curve|thirty|full|controls FRACTION ARM]
#
#   bash results/lcqmc/datasize/run.sh todo [curve|thirty|full|controls FRACTION ARM]   # the files still missing
#
# Every run of the study is made with one commit of the course's code: run this from a checkout of
# that commit (PYTHONPATH pointing at it), and leave it unmodified (the file records both).
set -euo pipefail

TODO=""
if [ "${1:-}" = todo ]; then
  TODO=1
  shift
else
  : "${LCQMC:?set LCQMC to the folder of the LCQMC train, dev and test files}"
  : "${CACHE:?set CACHE to the parse cache folder}"
  : "${WORK:?set WORK to the folder for the checkpoints of the runs}"
fi
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PARALLEL="${PARALLEL:-2}"

# Epochs per fraction: max(10, ceil(1120 / steps per epoch)), batch 64 (PLAN.md).
epochs_for() {
  case "$1" in
    0.01) echo 30 ;;
    *) echo 10 ;;
  esac
}

job() {  # fraction arm seed folder ("" for the curve) name-tag [extra flags]
  local fraction=$1 arm=$2 seed=$3 folder=$4 tag=$5
  shift 5
  local out="$HERE/${folder:+$folder/}f$fraction/$tag-$arm-seed$seed.json"
  [ -e "$out" ] && return 0
  if [ -n "$TODO" ]; then
    printf '%s\n' "${out#"$HERE"/}"
    return 0
  fi
  mkdir -p "$(dirname "$out")" "$WORK/logs"
  local log="$WORK/logs/${folder:+$folder-}f$fraction-$tag-$arm-seed$seed.log"
  # One line per job for `bash -c`: every word quoted with %q, so a path with spaces, quotes or `$(...)`
  # in it stays one argument and nothing in it is run.
  printf '%q ' python -m lessons_lib.cli experiment --data-dir "$LCQMC" --train-fraction "$fraction" \
    --subset-seed "$seed" --seeds "$seed" --preset matchflags --epochs "$(epochs_for "$fraction")" \
    --epoch-choice best_dev --variants "$arm" --threads 1 --no-progress --cache-dir "$CACHE" \
    --work-dir "$WORK/f$fraction" "$@" --out "$out"
  printf '> %q 2>&1\n' "$log"
}

curve_jobs() {
  local fraction seeds seed arm
  for fraction in 0.01 0.03 0.1; do
    case "$fraction" in
      0.01) seeds=$(seq 100 109) ;;
      0.03) seeds=$(seq 300 309) ;;
      0.1) seeds=$(seq 1000 1004) ;;
    esac
    for seed in $seeds; do
      for arm in none learned hard_mask; do
        job "$fraction" "$arm" "$seed" "" matchflags
      done
    done
  done
}

thirty_jobs() {  # the curve's fourth point, once the curve and its controls are done (PLAN.md)
  local seed arm
  for seed in $(seq 3000 3002); do
    for arm in none learned hard_mask; do
      job 0.3 "$arm" "$seed" "" matchflags
    done
  done
}

full_jobs() {  # A43: the whole training split, seed 0, the three arms (PLAN.md), after 30 %
  local arm
  for arm in none learned hard_mask; do
    job 1 "$arm" 0 "" matchflags
  done
}

control_jobs() {  # fraction arm: the controls of PLAN.md at that fraction, with its seeds
  local fraction=$1 arm=$2 seed seeds window window_flags=""
  case "$fraction" in
    0.01) seeds=$(seq 100 109) ;;
    0.03) seeds=$(seq 300 309) ;;
    0.1) seeds=$(seq 1000 1004) ;;
    *) echo "no seeds for fraction $fraction" >&2; exit 2 ;;
  esac
  case "$arm" in
    hard_mask) window=window_mask ;;
    learned) window=relative_position window_flags="--position-unit word" ;;
    *) echo "controls are for hard_mask or learned, not $arm" >&2; exit 2 ;;
  esac
  for seed in $seeds; do
    job "$fraction" "$arm" "$seed" controls matchflags_random_trees --parser-noise 1.0 --noise-seed "$seed"
    job "$fraction" "$arm" "$seed" controls matchflags_scrambled_words --scramble-words --noise-seed "$seed"
    job "$fraction" "$window" "$seed" controls matchflags $window_flags
  done
}

list_jobs() {
  case "${1:-curve}" in
    curve) curve_jobs ;;
    thirty) thirty_jobs ;;
    full) full_jobs ;;
    controls) control_jobs "${2:?fraction}" "${3:?arm}" ;;
    *) echo "usage: run.sh [todo] [curve|thirty|full|controls FRACTION ARM]" >&2; exit 2 ;;
  esac
}

main() {
  if [ -n "$TODO" ]; then
    list_jobs "$@"
  else
    list_jobs "$@" | xargs -d '\n' -P "$PARALLEL" -I{} bash -c '{}'
  fi
}

# bash reads a script as it runs it: one line that calls main and exits keeps a running study safe
# from an edit of this file
main "$@"; exit $?
