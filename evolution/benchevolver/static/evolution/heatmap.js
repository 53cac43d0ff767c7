/* Trajectory heatmap (BenchEvolver Figure 10): fetches the cached JSON rows and draws them
   with plotly.js. Layers, bottom to top: grey "no iteration", flat colours for rejections that
   were never measured and candidates in flight, faint solve-rate colours for measured
   rejections, full solve-rate colours for the seed and accepted cells, and the dark accepted
   path. Filters re-fetch; the URL keeps them so a view can be shared. */
(function () {
  "use strict";

  const config = JSON.parse(document.getElementById("heatmap-config").textContent);
  const initial = JSON.parse(document.getElementById("heatmap-initial").textContent) || {};
  const form = document.getElementById("heatmap-filters");
  const plot = document.getElementById("heatmap");
  const statusLine = document.getElementById("heatmap-status");
  const pager = document.getElementById("heatmap-pager");
  const csvLink = document.getElementById("heatmap-csv");
  // Red (hard, rarely solved) through yellow to green (easy); plotly.js has no RdYlGn built in.
  const COLORSCALE = [
    [0, "#a50026"], [0.1, "#d73027"], [0.3, "#f46d43"], [0.45, "#fdae61"], [0.55, "#fee08b"],
    [0.7, "#d9ef8b"], [0.85, "#66bd63"], [1, "#1a9850"],
  ];
  const ROW_PX = 26;
  const PATH_OFFSET = 0.38;
  // Rows keep their height however many there are, so text stays legible; beyond a few
  // hundred rows (limit=0) it is left out to keep drawing fast. Hover always works.
  const TEXT_ROWS_MAX = 400;
  let current = null;

  function escapeHtml(text) {
    return String(text == null ? "" : text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  function wrap(text, width) {
    const words = String(text || "").split(/\s+/);
    const lines = [];
    let line = "";
    words.forEach(function (w) {
      if ((line + " " + w).trim().length > width && line) {
        lines.push(line);
        line = w;
      } else {
        line = (line + " " + w).trim();
      }
    });
    if (line) lines.push(line);
    return lines.map(escapeHtml).join("<br>");
  }

  function fraction(p, a) {
    return a ? p + "/" + a : "–";
  }

  function pct(rate) {
    return rate == null ? "not measured" : Math.round(rate * 100) + "% solved";
  }

  function params() {
    const data = new FormData(form);
    const out = new URLSearchParams();
    data.forEach(function (value, key) {
      if (value !== "" && !(key === "offset" && value === "0")) out.set(key, value);
    });
    return out;
  }

  function fillOptions(options) {
    form.querySelectorAll("select[data-option]").forEach(function (select) {
      const values = options[select.dataset.option] || [];
      const chosen = select.value || initial[select.name] || "";
      select.length = 1; // keep "any"
      values.forEach(function (v) {
        const option = document.createElement("option");
        option.value = v;
        option.textContent = v || "(unlabelled)";
        select.appendChild(option);
      });
      select.value = values.indexOf(chosen) >= 0 ? chosen : "";
    });
  }

  function matrices(rows, columns) {
    // z is null where a layer has no cell (transparent); text must be "" there, or plotly
    // prints "null" through the layers above.
    const empty = function (fill) {
      return rows.map(function () {
        return new Array(columns).fill(fill);
      });
    };
    const m = {
      none: empty(null), flat: empty(null), faint: empty(null), main: empty(null),
      noneText: empty(""), flatText: empty(""), faintText: empty(""), mainText: empty(""),
      noneHover: empty(""), flatHover: empty(""), faintHover: empty(""), mainHover: empty(""),
    };
    rows.forEach(function (row, y) {
      const seed = row.seed;
      const seedHover =
        "<b>" + escapeHtml(row.label) + "</b> (" + escapeHtml(row.difficulty || "unlabelled") + ")" +
        "<br>seed: " + fraction(seed.p, seed.a) + " · " + pct(seed.rate) +
        (seed.lv ? " · level " + seed.lv : "") +
        "<br>outcome: " + escapeHtml(row.outcome) +
        (row.gain ? " · level gain +" + row.gain : "") +
        (row.stop_reason ? "<br>" + wrap(row.stop_reason, 70) : "");
      if (seed.rate == null) {
        m.none[y][0] = 1;
        m.noneText[y][0] = "not calibrated";
        m.noneHover[y][0] = seedHover;
      } else {
        m.main[y][0] = seed.rate;
        m.mainText[y][0] = fraction(seed.p, seed.a);
        m.mainHover[y][0] = seedHover;
      }
      const byRound = {};
      row.cells.forEach(function (cell) {
        byRound[cell.r] = cell;
      });
      for (let x = 1; x < columns; x++) {
        const cell = byRound[x];
        if (!cell) {
          m.none[y][x] = 1;
          m.noneText[y][x] = "";
          m.noneHover[y][x] = escapeHtml(row.label) + "<br>R" + x + ": no iteration ran";
          continue;
        }
        const hover =
          "<b>R" + cell.r + " · " + escapeHtml(cell.label) + "</b>" +
          (cell.f ? " · " + escapeHtml(cell.f) : "") +
          "<br>" + fraction(cell.p, cell.a) + " · " + pct(cell.rate) +
          (cell.lv ? " · level " + cell.lv : "") +
          (cell.idea ? "<br><i>idea:</i> " + wrap(cell.idea, 70) : "") +
          (cell.d !== "accepted" && cell.why ? "<br><i>why:</i> " + wrap(cell.why, 70) : "") +
          "<br><span style='color:#888'>click to open the candidate</span>";
        if (cell.d === "accepted") {
          m.main[y][x] = cell.rate == null ? 0 : cell.rate;
          m.mainText[y][x] = fraction(cell.p, cell.a);
          m.mainHover[y][x] = hover;
        } else if (cell.d !== "" && cell.rate != null) {
          m.faint[y][x] = cell.rate;
          m.faintText[y][x] = cell.label + "<br>" + fraction(cell.p, cell.a);
          m.faintHover[y][x] = hover;
        } else {
          m.flat[y][x] = cell.d === "" ? 1 : 0;
          m.flatText[y][x] = cell.label;
          m.flatHover[y][x] = hover;
        }
      }
    });
    return m;
  }

  function draw(data) {
    const rows = data.rows;
    const columns = Math.max(data.max_round, 1) + 1;
    const xs = Array.from({ length: columns }, function (_, i) { return i; });
    const ys = rows.map(function (_, i) { return i; });
    const xLabels = xs.map(function (i) { return i === 0 ? "Seed" : "R" + i; });
    const yLabels = rows.map(function (r) {
      const label = r.label.length > 38 ? r.label.slice(0, 37) + "…" : r.label;
      return escapeHtml(label) + (r.difficulty ? " · " + escapeHtml(r.difficulty) : "");
    });
    const m = matrices(rows, columns);
    const showText = rows.length <= TEXT_ROWS_MAX;
    const base = {
      type: "heatmap", x: xs, y: ys, xgap: 2, ygap: 2, hoverongaps: false,
      hovertemplate: "%{customdata}<extra></extra>",
      texttemplate: showText ? "%{text}" : "", textfont: { size: 10 },
    };
    const traces = [
      Object.assign({}, base, {
        name: "no iteration", z: m.none, text: m.noneText, customdata: m.noneHover,
        colorscale: [[0, "#e5e7eb"], [1, "#e5e7eb"]], showscale: false, zmin: 0, zmax: 1,
      }),
      Object.assign({}, base, {
        name: "unmeasured", z: m.flat, text: m.flatText, customdata: m.flatHover,
        colorscale: [[0, "#f6d5d8"], [1, "#dbe7fb"]], showscale: false, zmin: 0, zmax: 1,
        textfont: { size: 10, color: "#7a2e39" },
      }),
      Object.assign({}, base, {
        name: "rejected", z: m.faint, text: m.faintText, customdata: m.faintHover,
        colorscale: COLORSCALE, zmin: 0, zmax: 1, showscale: false, opacity: 0.35,
        textfont: { size: 10, color: "#374151" },
      }),
      Object.assign({}, base, {
        name: "seed / accepted", z: m.main, text: m.mainText, customdata: m.mainHover,
        colorscale: COLORSCALE, zmin: 0, zmax: 1,
        colorbar: { title: { text: "solve rate" }, thickness: 12, len: Math.min(1, 400 / (rows.length * ROW_PX + 1)), y: 1, yanchor: "top" },
        // No fixed colour: plotly picks dark or white text for each cell's colour, so the
        // counts stay readable on the dark red and dark green ends of the scale.
        textfont: { size: 11 },
      }),
    ];
    const px = [];
    const py = [];
    rows.forEach(function (row, y) {
      if (row.path.length < 2) return;
      // Along the lower edge of the cells, so the passes / attempts text stays readable.
      row.path.forEach(function (x) {
        px.push(x);
        py.push(y + PATH_OFFSET);
      });
      px.push(null);
      py.push(null);
    });
    traces.push({
      type: "scatter", mode: "lines+markers", x: px, y: py, name: "accepted lineage",
      line: { color: "#111827", width: 3 }, marker: { color: "#111827", size: 6 },
      hoverinfo: "skip", showlegend: false,
    });
    const height = Math.max(260, rows.length * ROW_PX + 110);
    const layout = {
      height: height,
      margin: { l: 10, r: 10, t: 40, b: 10 },
      xaxis: { tickvals: xs, ticktext: xLabels, side: "top", fixedrange: true, showgrid: false, zeroline: false, range: [-0.5, columns - 0.5] },
      yaxis: { tickvals: ys, ticktext: yLabels, autorange: "reversed", automargin: true, fixedrange: true, showgrid: false, zeroline: false },
      plot_bgcolor: "#ffffff",
      hoverlabel: { align: "left", bgcolor: "#ffffff", font: { size: 12 } },
      showlegend: false,
    };
    Plotly.react(plot, traces, layout, { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["select2d", "lasso2d"] });
    if (!plot.dataset.bound) {
      plot.dataset.bound = "1";
      plot.on("plotly_click", onClick);
    }
  }

  function onClick(event) {
    const point = event.points && event.points[0];
    if (!point || !current) return;
    const row = current.rows[point.y];
    if (!row) return;
    if (point.x === 0) {
      window.location.href = config.lineageUrl.replace("{id}", row.lineage);
      return;
    }
    const cell = row.cells.find(function (c) { return c.r === point.x; });
    if (cell) window.location.href = config.candidateUrl.replace("{id}", cell.id);
  }

  function describe(data) {
    if (!data.total) {
      return data.all_rows ? "No seed matches these filters." : "This campaign has no lineages yet.";
    }
    const first = data.offset + 1;
    const last = data.offset + data.rows.length;
    return "Seeds " + first + "–" + last + " of " + data.total +
      (data.total !== data.all_rows ? " matching (" + data.all_rows + " in the campaign)" : "") + ".";
  }

  function updatePager(data) {
    const paged = data.limit && data.total > data.limit;
    pager.hidden = !paged;
    if (!paged) return;
    const page = Math.floor(data.offset / data.limit) + 1;
    const pages = Math.ceil(data.total / data.limit);
    document.getElementById("heatmap-page-label").textContent = "page " + page + " of " + pages;
    pager.querySelector('[data-page="prev"]').disabled = data.offset <= 0;
    pager.querySelector('[data-page="next"]').disabled = data.offset + data.limit >= data.total;
  }

  function load() {
    const query = params();
    const qs = query.toString();
    history.replaceState(null, "", qs ? "?" + qs : window.location.pathname);
    const csvQuery = new URLSearchParams(query);
    csvQuery.delete("offset");
    csvLink.href = config.csvUrl + (csvQuery.toString() ? "?" + csvQuery : "");
    statusLine.textContent = "Loading…";
    plot.setAttribute("aria-busy", "true");
    return fetch(config.dataUrl + (qs ? "?" + qs : ""), { credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) {
          return response.text().then(function (text) {
            throw new Error(text || response.statusText);
          });
        }
        return response.json();
      })
      // The data and plotly.js download side by side; drawing waits for both.
      .then(function (data) {
        return window.plotlyReady.then(function () { return data; });
      })
      .then(function (data) {
        current = data;
        fillOptions(data.options);
        statusLine.textContent = describe(data);
        updatePager(data);
        if (data.rows.length) {
          draw(data);
        } else {
          Plotly.purge(plot);
        }
        plot.setAttribute("aria-busy", "false");
        plot.dataset.ready = "1";
      })
      .catch(function (error) {
        statusLine.textContent = "Could not load the heatmap: " + error.message;
        plot.setAttribute("aria-busy", "false");
      });
  }

  form.querySelectorAll("select").forEach(function (select) {
    if (initial[select.name] && select.querySelector('option[value="' + CSS.escape(initial[select.name]) + '"]')) {
      select.value = initial[select.name];
    }
    select.addEventListener("change", function () {
      form.elements.offset.value = "0";
      load();
    });
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    load();
  });
  pager.addEventListener("click", function (event) {
    const button = event.target.closest("button[data-page]");
    if (!button || !current) return;
    const step = button.dataset.page === "next" ? current.limit : -current.limit;
    form.elements.offset.value = String(Math.max(0, current.offset + step));
    load().then(function () { window.scrollTo({ top: 0 }); });
  });
  // Filters in the initial URL whose options arrive with the data are applied by fillOptions.
  ["difficulty", "family", "outcome"].forEach(function (name) {
    if (initial[name]) {
      const select = form.elements[name];
      const option = document.createElement("option");
      option.value = initial[name];
      option.textContent = initial[name];
      select.appendChild(option);
      select.value = initial[name];
    }
  });
  load();
})();
