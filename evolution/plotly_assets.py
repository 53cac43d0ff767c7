"""The plotly.js bundles the chart pages load, served by the site itself (never a CDN).

- ``cartesian``: the official cartesian partial bundle (npm ``plotly.js-cartesian-dist-min``:
  bar, box, contour, heatmap, histogram, image, pie, scatter, violin), kept in
  ``static/evolution/vendor/`` (``scripts/vendor_plotly.sh`` refreshes it). Every chart page
  draws only heatmaps, bars and scatter lines, so this is what they load: 1.5 MB minified,
  about 0.5 MB gzipped.
- ``full``: the whole plotly.js of the installed plotly package (4.8 MB, 1.5 MB gzipped), what
  the pages loaded before; ``settings.PLOTLY_BUNDLE = "full"`` brings it back (a trace type
  outside the cartesian bundle, or the chart-page benchmark's baseline).

Each bundle's URL carries its plotly.js version, so a browser may keep it for a year.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import plotly

BUNDLES = ("cartesian", "full")
_PATHS = {
    "cartesian": Path(__file__).resolve().parent
    / "static"
    / "evolution"
    / "vendor"
    / "plotly-cartesian.min.js",
    "full": Path(plotly.__file__).parent / "package_data" / "plotly.min.js",
}
_VERSION = re.compile(rb"plotly\.js(?: \([^)]*\))? v(\d+\.\d+\.\d+)")


@dataclass(frozen=True)
class Bundle:
    name: str
    version: str  # plotly.js's own version, read from the file's banner
    raw: bytes
    gzipped: bytes
    etag: str


@cache
def bundle(name: str) -> Bundle:
    """The bundle's bytes, gzipped once per process (level 9: it is compressed once and sent
    many times)."""
    raw = _PATHS[name].read_bytes()
    found = _VERSION.search(raw[:400])
    if not found:
        raise ValueError(f"{_PATHS[name]} has no plotly.js version banner")
    return Bundle(
        name=name,
        version=found.group(1).decode(),
        raw=raw,
        gzipped=gzip.compress(raw, compresslevel=9, mtime=0),
        etag=f'"plotly-{name}-{hashlib.sha1(raw).hexdigest()[:16]}"',
    )


@cache
def version(name: str) -> str:
    """The bundle's plotly.js version without compressing it (for building its URL)."""
    with _PATHS[name].open("rb") as f:
        found = _VERSION.search(f.read(400))
    if not found:
        raise ValueError(f"{_PATHS[name]} has no plotly.js version banner")
    return found.group(1).decode()
