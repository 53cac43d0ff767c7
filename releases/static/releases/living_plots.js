// Living-benchmark figures: every element with data-figure="<id>" is drawn with plotly.js from
// the JSON figure in the <script type="application/json" id="<id>"> element (built by
// releases/living_plots.py). The inline SVG beside it (.plot-fallback) is the page without
// JavaScript; it is hidden once plotly has drawn, and kept if plotly is missing or fails.
// plotly.js itself loads async ({% plotly_script %}): drawing waits for window.plotlyReady.
(function () {
  "use strict";
  var config = {displaylogo: false, responsive: true,
                modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"]};

  function draw(holder, Plotly) {
    var source = document.getElementById(holder.getAttribute("data-figure"));
    if (!source) {
      return;
    }
    var figure = JSON.parse(source.textContent);
    var fallback = holder.parentElement.querySelector(".plot-fallback");
    holder.hidden = false;  // plotly measures its container: it must be displayed
    try {
      Plotly.newPlot(holder, figure.data, figure.layout, config).then(function () {
        if (fallback) {
          fallback.hidden = true;
        }
        holder.setAttribute("data-rendered", "1");
      }, function () {
        holder.hidden = true;
      });
    } catch (error) {
      holder.hidden = true;
    }
  }

  function drawAll(Plotly) {
    var holders = document.querySelectorAll("[data-figure]");
    for (var i = 0; i < holders.length; i++) {
      draw(holders[i], Plotly);
    }
  }

  // plotly.js loads async (evolution/plotly_ready.js): draw once it and the page are there;
  // if it never loads, the inline SVGs stay.
  if (!window.plotlyReady) {
    return;
  }
  window.plotlyReady.then(function (Plotly) {
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", function () { drawAll(Plotly); });
    } else {
      drawAll(Plotly);
    }
  }, function () {});
})();
