#!/usr/bin/env bash
# Refresh the plotly.js bundle the chart pages load: the official cartesian partial bundle
# (npm package plotly.js-cartesian-dist-min: bar, box, contour, heatmap, histogram(2d), image,
# pie, scatter, violin), about 1.5 MB minified and 0.5 MB gzipped against 4.8 MB / 1.5 MB for
# the whole plotly.js. It is kept in the repository (nothing downloads at run time), so this
# runs only when upgrading:
#
#   scripts/vendor_plotly.sh 4.1.1
#
# then run the chart pages' tests (tests/evolution/benchevolver/analytics/test_plotly_bundle.py and the
# browser tests its docstring names) and `python -m bench chart_pages --quick`;
# docs/analytics.md#loading-the-chart-pages says more.
set -euo pipefail
version=${1:?usage: scripts/vendor_plotly.sh VERSION}
cd "$(dirname "$0")/.."
dest=evolution/static/evolution/vendor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "plotly.js-cartesian-dist-min@$version" >/dev/null)
tar -xzf "$work"/plotly.js-cartesian-dist-min-"$version".tgz -C "$work"
mkdir -p "$dest"
cp "$work/package/plotly-cartesian.min.js" "$dest/plotly-cartesian.min.js"
cp "$work/package/LICENSE" "$dest/plotly-LICENSE.txt"
head -2 "$dest/plotly-cartesian.min.js" | tail -1
