#!/usr/bin/env bash
# The main job, for now: grade the shipped sample runs with the CLI, publish
# each run's files under out/demo/<run>/, verify them, and print a summary.
set -euo pipefail
TRUEREWARD_EXTRAS= source "$(dirname "$0")/venv.sh"
out="${1:-out/demo}"
printf '%-18s %s\n' "run" "outcome"
for run in samples/runs/*/; do
  name="$(basename "$run")"
  line="$(.venv/bin/truereward fold "$run/rows.jsonl" --case-set "$run/task.json" \
          --run-id "$name" --logs "$out/$name")"
  .venv/bin/truereward verify "$out/$name" > /dev/null
  printf '%-18s %s\n' "$name" "$line"
done
echo "published under $out/ (grade.json, ctrf.json, and reward.json + reward.txt when gradable)"
