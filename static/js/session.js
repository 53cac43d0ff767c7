// Session loss on pages that update themselves (htmx). The server answers an htmx request
// from a logged-out browser with 401 (benchapp/session_guard.py) and htmx leaves the page as
// it is; this script says so in a banner, watches for the re-login (another tab, or the
// banner's link) and then hands the page a fresh CSRF token, because Django rotates it at login.
(function () {
  "use strict";
  const me = document.currentScript;
  const sessionUrl = me.dataset.sessionUrl;
  const loginUrl = me.dataset.loginUrl;
  let lost = false;
  let timer = null;
  let banner = null;

  function showBanner() {
    if (!banner) {
      banner = document.createElement("div");
      banner.id = "session-banner";
      banner.className = "session-banner";
      banner.setAttribute("role", "alert");
      const text = document.createElement("span");
      text.textContent =
        "Your session has ended, so nothing reaches the server. The page stays as it is and " +
        "your edits are kept in this browser; they are saved as soon as you log in again. ";
      const link = document.createElement("a");
      link.href = loginUrl;
      link.target = "_blank";
      link.rel = "noopener";
      link.textContent = "Log in again (opens a new tab)";
      banner.append(text, link);
    }
    const main = document.querySelector("main") || document.body;
    if (!banner.isConnected) main.prepend(banner);
  }

  function setToken(token) {
    const body = document.body;
    let headers = {};
    try {
      headers = JSON.parse(body.getAttribute("hx-headers") || "{}");
    } catch (e) {
      headers = {};
    }
    headers["X-CSRFToken"] = token;
    body.setAttribute("hx-headers", JSON.stringify(headers));
    document
      .querySelectorAll('input[name="csrfmiddlewaretoken"]')
      .forEach((input) => (input.value = token));
  }

  function currentToken() {
    const input = document.querySelector('input[name="csrfmiddlewaretoken"]');
    return input ? input.value : "";
  }

  // Asks the server whether this browser is logged in; on a (re-)login adopts the new token
  // and tells the page, which then sends what it kept.
  async function check() {
    let state;
    try {
      const response = await fetch(sessionUrl, { credentials: "same-origin", cache: "no-store" });
      if (!response.ok) return false;
      state = await response.json();
    } catch (e) {
      return false;
    }
    if (!state.authenticated) return false;
    const changed = state.csrf_token !== currentToken();
    setToken(state.csrf_token);
    if (lost || changed) restored();
    return true;
  }

  function restored() {
    lost = false;
    if (timer) clearInterval(timer);
    timer = null;
    if (banner) banner.remove();
    document.dispatchEvent(new CustomEvent("benchforge:session-restored"));
  }

  function markLost() {
    if (lost) return;
    lost = true;
    showBanner();
    document.dispatchEvent(new CustomEvent("benchforge:session-lost"));
    timer = setInterval(check, 3000);
  }

  window.BenchForgeSession = {
    isLost: () => lost,
    check,
    markLost,
  };

  document.addEventListener("htmx:responseError", (ev) => {
    const status = ev.detail.xhr.status;
    if (status === 401) markLost();
    // A 403 right after a re-login elsewhere is the stale CSRF token: fetch the new one.
    else if (status === 403) check();
  });
  window.addEventListener("focus", () => {
    if (lost) check();
  });
})();
