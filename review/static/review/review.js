// Keyboard-first review form. Everything here is an enhancement: without JavaScript the
// form is one long page that submits with a plain POST.
(function () {
  "use strict";
  const form = document.getElementById("review-form");
  if (!form) return;
  const problems = Array.from(form.querySelectorAll("section.problem"));
  const tabs = Array.from(form.querySelectorAll(".problem-tabs a"));
  let active = 0;

  function isTyping(el) {
    if (!el) return false;
    if (el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
    return el.tagName === "INPUT" && !["radio", "checkbox", "button", "submit"].includes(el.type);
  }

  function show(index, focus) {
    if (!problems.length) return;
    active = (index + problems.length) % problems.length;
    problems.forEach((p, i) => p.classList.toggle("hidden", i !== active));
    tabs.forEach((t, i) => t.classList.toggle("active", i === active));
    if (focus) {
      const first = problems[active].querySelector("input[type=radio]:checked, input[type=radio]");
      if (first) first.focus();
    }
  }

  form.classList.add("js");
  show(0, false);
  tabs.forEach((tab, i) =>
    tab.addEventListener("click", (ev) => {
      ev.preventDefault();
      show(i, true);
    })
  );

  // Active time per problem: counted only while the page is visible; sent with each autosave.
  const elapsed = new Map(problems.map((p) => [p.dataset.item, 0]));
  let lastTick = performance.now();
  setInterval(() => {
    const now = performance.now();
    const delta = (now - lastTick) / 1000;
    lastTick = now;
    if (document.visibilityState !== "visible" || !problems.length) return;
    const item = problems[active].dataset.item;
    elapsed.set(item, elapsed.get(item) + delta);
    const input = problems[active].querySelector("input.elapsed");
    if (input) input.value = elapsed.get(item).toFixed(3);
  }, 250);
  form.addEventListener("htmx:afterRequest", (ev) => {
    if (ev.detail.elt !== form || !ev.detail.successful) return;
    // The server has added what it received; count again from zero.
    problems.forEach((p) => {
      elapsed.set(p.dataset.item, 0);
      const input = p.querySelector("input.elapsed");
      if (input) input.value = "0";
    });
  });

  document.addEventListener("keydown", (ev) => {
    const target = ev.target;
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      form.requestSubmit();
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    // A digit on a focused rating sets that rating.
    if (/^[1-5]$/.test(ev.key) && target.type === "radio") {
      const scale = target.closest("fieldset.scale");
      const radio = scale && scale.querySelector(`input[type=radio][value="${ev.key}"]`);
      if (radio) {
        ev.preventDefault();
        radio.checked = true;
        radio.focus();
        radio.dispatchEvent(new Event("change", { bubbles: true }));
      }
      return;
    }
    if (isTyping(target)) return;
    if (ev.key === "j") {
      ev.preventDefault();
      show(active + 1, true);
    } else if (ev.key === "k") {
      ev.preventDefault();
      show(active - 1, true);
    }
  });

  // Tag typeahead: a picked suggestion replaces the token being typed.
  form.addEventListener("click", (ev) => {
    const pick = ev.target.closest(".tag-pick");
    if (!pick) return;
    const input = form.querySelector(`input[name="${pick.dataset.field}-tags"]`);
    if (!input) return;
    const parts = input.value.split(",").map((s) => s.trim());
    parts[parts.length - 1] = pick.dataset.name;
    input.value = parts.filter(Boolean).join(", ") + ", ";
    const list = document.getElementById(`sugg-${pick.dataset.field}`);
    if (list) list.innerHTML = "";
    input.focus();
    input.dispatchEvent(new Event("change", { bubbles: true }));
  });
})();

// A refused draft (409 closed round, 422 invalid values) answers with the save-status partial
// naming why: show it, instead of htmx's default of not swapping error answers.
document.addEventListener("htmx:beforeSwap", (ev) => {
  const status = ev.detail.xhr.status;
  if (status === 409 || status === 422) {
    ev.detail.shouldSwap = true;
    ev.detail.isError = false;
  }
});
