#!/usr/bin/env bash
# `nccltune report`, `show` and `diff` as a user runs them: exit codes and one-line errors, a
# self-contained HTML report whose SVG holds the curves of the defaults, the tuned profile and the
# journal's best candidates, and a headless Chromium screenshot of it that is not blank and shows
# the curves' and the node diagram's colours; `report --fleet`: a fleet survey's page of its own (a
# screenshot with its heat map's colours), the survey in a profile's report, a malformed survey.
# usage: report_browser_test.sh NCCLTUNE PNG_STATS FIXTURES
nccltune=$1
png_stats=$2
fixtures=$3
store=$fixtures/report/store
profile=$store/h100-80gb-hbm3.2gpu.nics-unknown.nccl2.28/2n.yaml
source "$(dirname "$0")/lib.sh"

# show and diff: exit codes and errors.
expect_exit 0 "show" -- "$nccltune" show "$profile"
expect_in "$work/out" "env      NCCL_ALGO=NVLS,Ring,Tree" "show lists the env"
expect_exit 0 "diff of a profile with itself" -- "$nccltune" diff "$profile" "$profile"
expect_in "$work/out" "identical" "diff says identical"
nan_profile=$fixtures/report/nan-2n.yaml  # NaN results: equal to themselves, unknown speedups read n/a
expect_exit 0 "diff of a profile holding NaN with itself" -- "$nccltune" diff "$nan_profile" "$nan_profile"
expect_in "$work/out" "identical" "diff of a NaN profile with itself says identical"
expect_exit 0 "show of a profile holding NaN" -- "$nccltune" show "$nan_profile"
expect_in "$work/out" "speedup  n/a geometric mean" "show prints an unknown speedup as n/a"
expect_exit 1 "diff across an NCCL upgrade" -- "$nccltune" diff "$profile" "$fixtures/report/upgraded-2n.yaml"
expect_in "$work/out" "nccl_version: 2.28.9 -> 2.29.2" "diff names the NCCL upgrade"
printf 'schema: nccltune/profile/v1\nshape: {key: "k", nodes: 1}\nenv: {NCCL_ALGO: "Ring; rm -rf /"}\n' >"$work/bad.yaml"
expect_exit 2 "diff with an invalid profile" -- "$nccltune" diff "$profile" "$work/bad.yaml"
expect_one_line "$work/err" "diff with an invalid profile"
expect_in "$work/err" "bad.yaml" "the error names the file"
expect_exit 2 "show of a missing profile" -- "$nccltune" show "$work/missing.yaml"
expect_one_line "$work/err" "show of a missing profile"

# report: errors leave nothing behind.
expect_exit 2 "report of an invalid profile" -- "$nccltune" report "$work/bad.yaml" -o "$work/bad.html"
expect_one_line "$work/err" "report of an invalid profile"
[ ! -e "$work/bad.html" ] && pass || fail "a failed report wrote $work/bad.html"
expect_exit 2 "report with an unreadable topology" -- \
  "$nccltune" report "$profile" --topology "$work/no-such-snapshot" -o "$work/bad.html"
[ ! -e "$work/bad.html" ] && pass || fail "a failed report wrote $work/bad.html"

# report: the journal is found in the store root above the profile.
expect_exit 0 "report" -- "$nccltune" report "$profile" --topology "$fixtures/nodes/dgx-h100" \
  --title "browser test: demo profile" -o "$work/report.html"
html=$work/report.html
for series in defaults tuned candidate-1 candidate-2 candidate-3; do
  expect_in "$html" "<polyline class=\"curve\" data-series=\"$series\"" "the $series curve"
done
expect_in "$html" "class=\"node-diagram\"" "the node diagram"
expect_in "$html" "$store/journal.jsonl" "the journal next to the store is used"
if grep -qiE '<script|<link|@import|url\(|src=|href=' "$html"; then fail "report is not self-contained"; else pass; fi

# report --fleet: the survey on a page of its own (before any tune), and in a profile's report.
survey=$fixtures/fleet/survey-8n.json
expect_exit 0 "report --fleet" -- "$nccltune" report --fleet "$survey" -o "$work/fleet.html"
expect_in "$work/fleet.html" '<svg class="fleet-heatmap"' "the fleet page draws the heat map"
expect_in "$work/fleet.html" 'class="suspect-link"' "the fleet page outlines the suspect link"
if grep -qiE '<script|<link|@import|url\(|src=|href=' "$work/fleet.html"; then fail "fleet page is not self-contained"; else pass; fi
expect_exit 0 "report PROFILE --fleet" -- "$nccltune" report "$profile" --fleet "$survey" -o "$work/both.html"
expect_in "$work/both.html" '<section id="fleet">' "the profile's report holds the survey"
printf '{"schema": "nccltune/fleet/v1", "nodes": ' >"$work/bad-fleet.json"
expect_exit 2 "report --fleet of a malformed survey" -- \
  "$nccltune" report --fleet "$work/bad-fleet.json" -o "$work/bad.html"
expect_one_line "$work/err" "report --fleet of a malformed survey"
expect_in "$work/err" "bad-fleet.json" "the error names the survey"
[ ! -e "$work/bad.html" ] && pass || fail "a failed report wrote $work/bad.html"
expect_exit 2 "report without PROFILE or --fleet" -- "$nccltune" report -o "$work/bad.html"
expect_one_line "$work/err" "report without PROFILE or --fleet"

# The screenshot: Chromium as Debian ships it, headless, the whole report in one tall window.
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  fail "chromium is not installed (./run.sh test installs it)"
else
  # Chromium wants a writable home and profile; keep both inside $work.
  screenshot() {  # screenshot HTML PNG: the whole report in one tall window
    HOME=$work timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
      --user-data-dir="$work/chromium" --screenshot="$2" --window-size=1400,3800 \
      "file://$1" >"$work/chromium.log" 2>&1
    [ -s "$2" ] || { fail "chromium wrote no screenshot of $(basename "$1")"; tail -5 "$work/chromium.log"; }
  }
  # Pixels of the defaults and tuned line colours, the GPU tiles and NVSwitch bar, the NIC tiles.
  # The curves' dots are a darker shade, so only the lines and their legend swatches count: on
  # the demo report about 550 (defaults, under the tuned curve where they agree) and 1700 (tuned)
  # pixels, 56 each without the lines.
  colours=(64748b 16a34a 4d7c0f 1d4ed8)
  value() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$2"; }
  curve_min=400
  screenshot "$html" "$work/report.png"
  if [ -s "$work/report.png" ]; then
    stats=$("$png_stats" "$work/report.png" "${colours[@]}") || stats=""
    echo "screenshot: $stats"
    [ "$(value width "$stats")" = 1400 ] && pass || fail "screenshot width: $stats"
    [ "${stats:+x}" ] && [ "$(value colours "$stats")" -ge 500 ] && pass || fail "screenshot looks blank: $stats"
    [ "${stats:+x}" ] && [ "$(value 64748b "$stats")" -ge "$curve_min" ] && pass ||
      fail "no defaults curve on the screenshot: $stats"
    [ "${stats:+x}" ] && [ "$(value 16a34a "$stats")" -ge "$curve_min" ] && pass ||
      fail "no tuned curve on the screenshot: $stats"
    [ "${stats:+x}" ] && [ "$(value 4d7c0f "$stats")" -ge 2000 ] && pass || fail "no GPUs on the screenshot: $stats"
    [ "${stats:+x}" ] && [ "$(value 1d4ed8 "$stats")" -ge 300 ] && pass || fail "no NICs on the screenshot: $stats"
    [ -n "${NCCLTUNE_KEEP_SCREENSHOT:-}" ] && cp "$work/report.png" "$html" "$NCCLTUNE_KEEP_SCREENSHOT/"
  fi
  # The control: the same report without the two polylines must fall below the curve thresholds,
  # or the checks above would pass on the legend and dots alone.
  grep -vE '<polyline class="curve" data-series="(defaults|tuned)"' "$html" >"$work/no-curves.html"
  screenshot "$work/no-curves.html" "$work/no-curves.png"
  if [ -s "$work/no-curves.png" ]; then
    stats=$("$png_stats" "$work/no-curves.png" "${colours[@]}") || stats=""
    echo "screenshot without the curves: $stats"
    [ "${stats:+x}" ] && [ "$(value 64748b "$stats")" -lt "$curve_min" ] && pass ||
      fail "the defaults curve check passes without the curve: $stats"
    [ "${stats:+x}" ] && [ "$(value 16a34a "$stats")" -lt "$curve_min" ] && pass ||
      fail "the tuned curve check passes without the curve: $stats"
  fi
  # The fleet page: the heat map's green pairs (about 15000 pixels), the slow link's red cell and
  # the legend's red swatch (about 1200).
  screenshot "$work/fleet.html" "$work/fleet.png"
  if [ -s "$work/fleet.png" ]; then
    stats=$("$png_stats" "$work/fleet.png" 16a34a dc2626) || stats=""
    echo "fleet screenshot: $stats"
    [ "${stats:+x}" ] && [ "$(value colours "$stats")" -ge 500 ] && pass || fail "fleet screenshot looks blank: $stats"
    [ "${stats:+x}" ] && [ "$(value 16a34a "$stats")" -ge 5000 ] && pass ||
      fail "no green pairs on the fleet screenshot: $stats"
    [ "${stats:+x}" ] && [ "$(value dc2626 "$stats")" -ge 500 ] && pass || fail "no slow pair on the fleet screenshot: $stats"
    # Each cell's share of the median is written in it, white on the green: without those
    # numbers the same page shows hundreds more green pixels (a screenshot carries the numbers).
    green_with_numbers=$(value 16a34a "$stats")
    grep -v 'class="cell-number"' "$work/fleet.html" >"$work/fleet-no-numbers.html"
    screenshot "$work/fleet-no-numbers.html" "$work/fleet-no-numbers.png"
    stats=$("$png_stats" "$work/fleet-no-numbers.png" 16a34a) || stats=""
    echo "fleet screenshot without the cells' numbers: $stats"
    [ "${stats:+x}" ] && [ -n "$green_with_numbers" ] && [ "$(value 16a34a "$stats")" -ge $((green_with_numbers + 300)) ] &&
      pass || fail "the fleet screenshot shows no numbers in the cells (green $green_with_numbers with, $stats without)"
  fi
fi

finish
