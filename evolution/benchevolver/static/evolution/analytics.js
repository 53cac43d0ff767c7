/* Campaign analytics: every [data-chart] block fetches its cached JSON and draws it with
   plotly.js. One renderer per chart name; each says plainly when there is nothing to show. */
(function () {
  "use strict";

  const config = JSON.parse(document.getElementById("analytics-config").textContent);
  const SEED = "#9ca3af";
  const EVOLVED = "#c0392b";
  const DECISION_COLORS = {
    accepted: "#1f8a4c", invalid: "#c0392b", not_harder: "#b7791f",
    judge_rejected: "#8e44ad", duplicate: "#2c7fb8", error: "#6b7280",
  };
  const PLOT_CONFIG = { displaylogo: false, responsive: true };
  // Twenty colours that stay apart from each other (families, stacked bars).
  const PALETTE = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#393b79", "#e6550d", "#31a354", "#843c39", "#7b4173", "#3182bd",
    "#fd8d3c", "#74c476", "#ad494a", "#a55194",
  ];

  // An axis of counts: whole numbers only (one tick per unit while the counts are small).
  function countAxis(title, values) {
    const max = Math.max.apply(null, [0].concat((values || []).filter(function (v) { return v != null; })));
    const axis = { title: { text: title }, rangemode: "tozero", tickformat: "d" };
    if (max <= 10) axis.dtick = 1;
    return axis;
  }

  function human(decision) {
    return String(decision).replace(/_/g, " ");
  }

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(function (kv) { node.setAttribute(kv[0], kv[1]); });
    if (text != null) node.textContent = text;
    return node;
  }

  function pct(v) {
    return v == null ? "–" : (v * 100).toFixed(1) + "%";
  }

  function empty(body, message) {
    body.replaceChildren(el("p", { class: "empty" }, message));
  }

  function plotInto(body, traces, layout, cls) {
    const div = el("div", { class: cls || "chart" });
    body.appendChild(div);
    Plotly.newPlot(div, traces, Object.assign({
      margin: { l: 50, r: 10, t: 40, b: 50 }, height: 300,
      legend: { orientation: "h", y: -0.2 }, font: { size: 12 },
    }, layout), PLOT_CONFIG);
    return div;
  }

  function table(columns, rows) {
    const t = el("table", { class: "compact" });
    const head = el("tr");
    columns.forEach(function (c) { head.appendChild(el("th", { class: c.num ? "num" : "" }, c.label)); });
    t.appendChild(el("thead")).appendChild(head);
    const body = el("tbody");
    rows.forEach(function (row) {
      const tr = el("tr");
      columns.forEach(function (c) {
        const td = el("td", { class: c.num ? "num" : "" });
        const value = c.value(row);
        if (value instanceof Node) td.appendChild(value); else td.textContent = value == null ? "–" : value;
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    t.appendChild(body);
    return t;
  }

  const renderers = {
    pass_rates: function (body, data) {
      if (!data.rows.length) return empty(body, "No seed has been calibrated yet.");
      const grid = el("div", { class: "chart-grid" });
      body.appendChild(grid);
      data.models.forEach(function (model) {
        const rows = data.rows.filter(function (r) { return r.model === model; });
        const x = rows.map(function (r) { return r.difficulty; });
        const bar = function (name, key, color, n) {
          return {
            type: "bar", name: name, x: x, marker: { color: color },
            y: rows.map(function (r) { return r[key] == null ? null : r[key] * 100; }),
            text: rows.map(function (r) { return r[key] == null ? "" : Math.round(r[key] * 100) + "%"; }),
            textposition: "outside",
            hovertemplate: rows.map(function (r) {
              return name + " · " + r.difficulty + ": " + pct(r[key]) + " (" + n(r) + ")<extra></extra>";
            }),
          };
        };
        plotInto(grid, [
          bar("seeds", "seed_rate", SEED, function (r) { return r.seed_passes + "/" + r.seed_attempts; }),
          bar("evolved", "evolved_rate", EVOLVED, function (r) { return r.evolved_passes + "/" + r.evolved_attempts + ", " + r.evolved_problems + " problems"; }),
        ], {
          title: { text: model, font: { size: 13 } }, barmode: "group",
          yaxis: { title: { text: "pass@1 (%)" }, range: [0, 110] }, height: 280,
        });
      });
    },

    funnel: function (body, data) {
      if (!data.decided) return empty(body, "No candidate has been decided yet.");
      // The funnel as horizontal bars, widest stage on top, each labelled with its count and
      // its share of the first stage (what plotly's funnel trace shows, which the cartesian
      // bundle does not have).
      const first = data.stages.length ? data.stages[0].count : 0;
      plotInto(body, [{
        type: "bar", orientation: "h", y: data.stages.map(function (s) { return s.label; }),
        x: data.stages.map(function (s) { return s.count; }),
        text: data.stages.map(function (s) {
          return s.count + (first ? " (" + Math.round(100 * s.count / first) + "%)" : "");
        }),
        textposition: "auto", cliponaxis: false,
        hovertemplate: "%{y}: %{x} candidates<extra></extra>",
        marker: { color: ["#1e3a8a", "#1d4ed8", "#2563eb", "#3b82f6", "#60a5fa", "#1f8a4c"] },
      }], {
        margin: { l: 150, r: 10, t: 10, b: 20 }, height: 280, showlegend: false,
        yaxis: { autorange: "reversed" }, xaxis: { visible: false, rangemode: "tozero" },
      });
      if (data.reasons.length) {
        const top = data.reasons.slice(0, 12).reverse();
        plotInto(body, [{
          type: "bar", orientation: "h", x: top.map(function (r) { return r.count; }),
          y: top.map(function (r) {
            const text = human(r.decision) + ": " + (r.label || r.reason);
            return text.length > 58 ? text.slice(0, 57) + "…" : text;
          }),
          customdata: top.map(function (r) { return r.count > 1 ? " (numbers differ between them)" : ""; }),
          marker: { color: top.map(function (r) { return DECISION_COLORS[r.decision] || "#888"; }) },
          hovertemplate: "%{y}<br>%{x} candidates%{customdata}<extra></extra>",
        }], {
          margin: { l: 10, r: 10, t: 30, b: 40 }, yaxis: { automargin: true },
          xaxis: countAxis("candidates", top.map(function (r) { return r.count; })),
          height: 100 + top.length * 26, title: { text: "Rejections by reason", font: { size: 13 } },
        });
        const details = el("details");
        details.appendChild(el("summary", {}, "All " + data.reasons_total + " rejection reasons"));
        details.appendChild(table([
          { label: "Decision", value: function (r) { return human(r.decision); } },
          { label: "Reason (first example)", value: function (r) { return r.label || r.reason; } },
          { label: "Candidates", num: true, value: function (r) { return r.count; } },
          { label: "Example", value: function (r) {
            return el("a", { href: config.candidateUrl.replace("{id}", r.example) }, "#" + r.example);
          } },
        ], data.reasons));
        body.appendChild(details);
      }
    },

    cost: function (body, data) {
      if (!data.roles.length) return empty(body, "No model call has been logged for this campaign.");
      const roles = data.roles.map(function (r) { return r.role; });
      plotInto(body, [
        { type: "bar", name: "cost per accepted ($)", x: roles, y: data.roles.map(function (r) { return r.cost_per_accepted; }), marker: { color: "#2457c5" }, offsetgroup: 1 },
        { type: "bar", name: "calls per accepted", x: roles, y: data.roles.map(function (r) { return r.calls_per_accepted; }), yaxis: "y2", marker: { color: "#9ca3af" }, offsetgroup: 2 },
      ], {
        barmode: "group", yaxis: { title: { text: "$ per accepted" }, rangemode: "tozero" },
        yaxis2: { title: { text: "calls per accepted" }, overlaying: "y", side: "right", rangemode: "tozero" },
        margin: { l: 60, r: 60, t: 20, b: 60 },
      });
      body.appendChild(table([
        { label: "Role", value: function (r) { return r.role; } },
        { label: "Calls", num: true, value: function (r) { return r.calls; } },
        { label: "Failed", num: true, value: function (r) { return r.failed; } },
        { label: "Unparsable", num: true, value: function (r) { return r.unparsable; } },
        { label: "Tokens", num: true, value: function (r) { return r.tokens; } },
        { label: "Cost ($)", num: true, value: function (r) { return r.cost.toFixed(4); } },
        { label: "Calls / accepted", num: true, value: function (r) { return r.calls_per_accepted; } },
        { label: "Cost / accepted ($)", num: true, value: function (r) { return r.cost_per_accepted == null ? null : r.cost_per_accepted.toFixed(4); } },
      ], data.roles));
    },

    families: function (body, data) {
      if (!data.rounds.length) return empty(body, "No candidate has been proposed yet.");
      const traces = data.families.map(function (family) {
        return {
          type: "bar", name: family, x: data.rounds.map(function (r) { return "R" + r; }),
          y: data.proposed[family],
          customdata: data.accepted[family],
          hovertemplate: family + " · %{x}: %{y} proposed, %{customdata} accepted<extra></extra>",
        };
      });
      const totals = data.rounds.map(function (_, i) {
        return data.families.reduce(function (sum, f) { return sum + (data.proposed[f][i] || 0); }, 0);
      });
      plotInto(body, traces, {
        barmode: "stack", colorway: PALETTE, height: 340,
        yaxis: countAxis("candidates", totals),
      });
      body.appendChild(table([
        { label: "Family", value: function (r) { return r.family; } },
        { label: "Proposed", num: true, value: function (r) { return r.proposed; } },
        { label: "Accepted", num: true, value: function (r) { return r.accepted; } },
        { label: "Acceptance", num: true, value: function (r) { return pct(r.acceptance_rate); } },
      ], data.table.slice(0, 15)));
    },

    categories: function (body, data) {
      if (!data.rows.length) return empty(body, "No reviewed tags yet for this campaign's seeds or accepted problems.");
      const summary = el("p", {}, data.seed_categories + " categories among " + data.seeds_reviewed +
        " reviewed seeds → " + data.evolved_categories + " among " + data.evolved_reviewed + " reviewed evolved problems.");
      body.appendChild(summary);
      const top = data.rows.slice(0, 11).reverse();
      const labels = top.map(function (r) { return r.tag; });
      plotInto(body, [
        { type: "bar", orientation: "h", name: "seed share", y: labels, x: top.map(function (r) { return r.seed_share * 100; }), marker: { color: SEED } },
        { type: "bar", orientation: "h", name: "evolved share", y: labels, x: top.map(function (r) { return r.evolved_share * 100; }), marker: { color: EVOLVED },
          text: top.map(function (r) { return pct(r.seed_share) + " → " + pct(r.evolved_share); }), textposition: "outside" },
      ], { barmode: "group", xaxis: { title: { text: "% of tag mentions" } }, margin: { l: 200, r: 60, t: 10, b: 50 }, height: 120 + top.length * 40 });
      const details = el("details");
      details.appendChild(el("summary", {}, "All " + data.rows.length + " categories (Figure 9)"));
      details.appendChild(table([
        { label: "Category", value: function (r) { return r.tag; } },
        { label: "Seed mentions", num: true, value: function (r) { return r.seed_mentions; } },
        { label: "Evolved mentions", num: true, value: function (r) { return r.evolved_mentions; } },
        { label: "Seed share", num: true, value: function (r) { return pct(r.seed_share); } },
        { label: "Evolved share", num: true, value: function (r) { return pct(r.evolved_share); } },
        { label: "Shift", num: true, value: function (r) { return (r.shift >= 0 ? "+" : "") + (r.shift * 100).toFixed(1); } },
      ], data.rows));
      body.appendChild(details);
    },

    ratings: function (body, data) {
      const dims = data.dimensions;
      const any = Object.keys(dims).some(function (d) { return dims[d].seed_summary.n || dims[d].evolved_summary.n; });
      if (!any) return empty(body, "No ratings yet for this campaign's seeds or accepted problems.");
      const grid = el("div", { class: "chart-grid" });
      body.appendChild(grid);
      const titles = { clarity: "Clarity", novelty: "Novelty / insight", difficulty: "Difficulty", cf_rating: "Estimated Codeforces rating" };
      Object.keys(dims).forEach(function (dim) {
        const panel = dims[dim];
        const mean = function (s) { return s.mean == null ? "–" : s.mean; };
        plotInto(grid, [
          { type: "bar", name: "seed (n=" + panel.seed_summary.n + ")", x: panel.bins, y: panel.seed, marker: { color: SEED } },
          { type: "bar", name: "evolved (n=" + panel.evolved_summary.n + ")", x: panel.bins, y: panel.evolved, marker: { color: EVOLVED } },
        ], {
          title: { text: titles[dim] + ": mean " + mean(panel.seed_summary) + " → " + mean(panel.evolved_summary), font: { size: 13 } },
          barmode: "group", height: 280,
          yaxis: countAxis("problems", panel.seed.concat(panel.evolved)),
        });
      });
    },

    new_categories: function (body, data) {
      if (!data.lineages) return empty(body, "No lineage has both its seed and an accepted problem reviewed yet.");
      body.appendChild(el("p", {}, data.lineages + " reviewed lineages introduce " + data.mean_new +
        " new categories on average; " + pct(data.share_with_new) + " introduce at least one."));
      plotInto(body, [{
        type: "bar", x: data.histogram.map(function (h) { return h.new; }),
        y: data.histogram.map(function (h) { return h.lineages; }), marker: { color: EVOLVED },
        hovertemplate: "%{x} new categories: %{y} lineages<extra></extra>",
      }], {
        xaxis: { title: { text: "new categories" }, dtick: 1, tickformat: "d" },
        yaxis: countAxis("lineages", data.histogram.map(function (h) { return h.lineages; })),
        height: 260,
      });
    },
  };

  document.querySelectorAll("[data-chart]").forEach(function (body) {
    const render = renderers[body.dataset.chart];
    if (!render) return;
    fetch(body.dataset.url, { credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error(response.status + " " + response.statusText);
        return response.json();
      })
      // The data and plotly.js download side by side; drawing waits for both.
      .then(function (data) {
        return window.plotlyReady.then(function () { return data; });
      })
      .then(function (data) {
        body.replaceChildren();
        render(body, data);
        // Plots laid out in a grid were sized before their siblings existed; fit them now.
        body.querySelectorAll(".js-plotly-plot").forEach(function (div) {
          Plotly.Plots.resize(div);
        });
      })
      .catch(function (error) {
        empty(body, "Could not load this chart: " + error.message);
      })
      .finally(function () {
        body.setAttribute("aria-busy", "false");
      });
  });
})();
