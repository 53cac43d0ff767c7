/* window.plotlyReady: a promise of Plotly for the page's chart scripts. The bundle is loaded
   with `async` ({% plotly_script %}, evolution/templatetags/charts.py) so that parsing the page
   never waits for it; a chart script fetches its data at once and draws when both are there:
   window.plotlyReady.then(function (Plotly) { ... }). It rejects when the bundle fails to load. */
(function () {
  "use strict";
  var tag = document.getElementById("plotly-js");
  window.plotlyReady = new Promise(function (resolve, reject) {
    // Scripts run one at a time: if Plotly is not defined yet, the bundle's load event is
    // still to come.
    if (window.Plotly) {
      resolve(window.Plotly);
      return;
    }
    if (!tag) {
      reject(new Error("this page loads no plotly.js"));
      return;
    }
    tag.addEventListener("load", function () {
      if (window.Plotly) {
        resolve(window.Plotly);
      } else {
        reject(new Error("plotly.js loaded but defined no Plotly"));
      }
    });
    tag.addEventListener("error", function () {
      reject(new Error("plotly.js could not be loaded"));
    });
  });
})();
