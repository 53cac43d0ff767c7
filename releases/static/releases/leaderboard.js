// Public leaderboard: the date slider (LiveCodeBench's window) and the chart of scores with
// their intervals. Sorting and filtering are links and a GET form, so they work without it.
(function () {
  "use strict";

  var range = document.getElementById("after-range");
  var dateInput = document.getElementById("after");
  var label = document.getElementById("after-label");
  if (range && dateInput) {
    var dates = range.dataset.dates ? range.dataset.dates.split(",") : [];
    var show = function () {
      var i = Number(range.value);
      var chosen = i > 0 ? dates[i - 1] : "";
      dateInput.value = chosen;
      if (label) {
        label.textContent = chosen || "the start";
      }
    };
    range.addEventListener("input", show);
    range.addEventListener("change", function () {
      show();
      range.form.submit();
    });
  }

  var data = document.getElementById("leaderboard-chart-data");
  var target = document.getElementById("leaderboard-chart");
  if (!data || !target || !window.plotlyReady) {
    return;
  }
  window.plotlyReady.then(function (Plotly) { draw(Plotly); });

  function draw(Plotly) {
    var rows = JSON.parse(data.textContent);
    // Top of the table at the top of the chart.
    rows = rows.slice().reverse();
    var pct = function (v) { return Math.round(v * 1000) / 10; };
    // A mean over one problem has no interval worth drawing ([x, x]): no error bar, and the
    // hover says why. NaN leaves that bar's error bar out.
    var few = function (r) { return r.n != null && r.n < 2; };
    var trace = {
      type: "bar",
      orientation: "h",
      y: rows.map(function (r) { return r.model; }),
      x: rows.map(function (r) { return pct(r.value); }),
      error_x: {
        type: "data",
        symmetric: false,
        array: rows.map(function (r) { return few(r) ? NaN : pct(r.high) - pct(r.value); }),
        arrayminus: rows.map(function (r) { return few(r) ? NaN : pct(r.value) - pct(r.low); }),
        color: "#1d232b",
        thickness: 1.5,
        width: 6
      },
      marker: {color: "#2457c5"},
      textposition: "none",
      cliponaxis: false,
      customdata: rows.map(function (r) {
        return [few(r) ? "n=1, no interval" : "[" + pct(r.low).toFixed(1) + "%, " + pct(r.high).toFixed(1) + "%]", r.n];
      }),
      hovertemplate: "%{y}<br>pass@1 %{x:.1f}% %{customdata[0]}<br>%{customdata[1]} problems<extra></extra>"
    };
    // Each value is written just past the end of its interval (or of its bar when it has
    // none), never on the bar where the interval's line would cross it.
    var annotations = rows.map(function (r) {
      return {
        x: few(r) ? pct(r.value) : Math.max(pct(r.value), pct(r.high)),
        y: r.model,
        xref: "x",
        yref: "y",
        text: pct(r.value).toFixed(1) + "%",
        showarrow: false,
        xanchor: "left",
        xshift: 6,
        font: {color: "#1d232b", size: 12}
      };
    });
    var height = Math.max(220, 60 + rows.length * 36);
    Plotly.newPlot(target, [trace], {
      height: height,
      margin: {l: 180, r: 60, t: 8, b: 48},
      xaxis: {title: {text: "pass@1 (%), 95% bootstrap interval"}, range: [0, 100], dtick: 10, tickformat: "d", gridcolor: "#e5e7eb"},
      yaxis: {automargin: true},
      annotations: annotations,
      font: {family: "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", size: 13, color: "#1d232b"},
      plot_bgcolor: "#ffffff",
      paper_bgcolor: "#ffffff"
    }, {displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"]});
  }
})();
