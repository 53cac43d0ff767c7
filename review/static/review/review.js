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
  // After a refused submit the server marks the problems that need attention: open the first.
  const firstError = problems.findIndex((p) => p.classList.contains("has-error"));
  show(firstError >= 0 ? firstError : 0, false);
  // Keyboard users start on the problem: Tab enters its form, digits rate it.
  if (problems.length && document.activeElement === document.body)
    problems[active].focus({ preventScroll: true });
  if (firstError >= 0) {
    const errors = problems[firstError].querySelector(".field-errors");
    if (errors) errors.scrollIntoView({ block: "center" });
  }
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
    draftSaved();
    // The server has added what it received; count again from zero.
    problems.forEach((p) => {
      elapsed.set(p.dataset.item, 0);
      const input = p.querySelector("input.elapsed");
      if (input) input.value = "0";
    });
  });

  // --- Keyboard ---------------------------------------------------------------------------
  // Digits rate the shown problem without clicking first: the focused scale if a rating has
  // focus, else the first scale not yet rated. Letters set validity, skip, flag and undo.
  const undoStack = [];
  const groupKey = form.dataset.group;
  const flagKey = `benchforge:review-flags:${groupKey}`;

  function numericScales(section) {
    return Array.from(section.querySelectorAll("fieldset.scale")).filter((f) =>
      f.querySelector('input[type=radio][value="1"]')
    );
  }

  function setRadio(radio) {
    const group = Array.from(form.querySelectorAll(`input[name="${CSS.escape(radio.name)}"]`));
    const previous = group.find((r) => r.checked);
    undoStack.push({ name: radio.name, value: previous ? previous.value : null });
    radio.checked = true;
    radio.dispatchEvent(new Event("change", { bubbles: true }));
    refreshMarkers();
  }

  function undo() {
    const last = undoStack.pop();
    if (!last) return;
    const group = Array.from(form.querySelectorAll(`input[name="${CSS.escape(last.name)}"]`));
    group.forEach((r) => (r.checked = r.value === last.value));
    if (group.length) group[0].dispatchEvent(new Event("change", { bubbles: true }));
    refreshMarkers();
  }

  // A problem is done when everything its submit needs is filled in.
  function isDone(section) {
    const names = new Set();
    section.querySelectorAll("[name]").forEach((el) => {
      if (el.type !== "hidden") names.add(el.name);
    });
    for (const name of names) {
      const fields = Array.from(section.querySelectorAll(`[name="${CSS.escape(name)}"]`));
      if (fields[0].type === "radio") {
        if (!fields.some((r) => r.checked)) return false;
      } else if (name.endsWith("-validity_reason")) {
        const validity = section.querySelector(`[name$="-validity"]:checked`);
        if (validity && validity.value !== "valid" && !fields[0].value.trim()) return false;
      } else if (!fields[0].value.trim()) {
        return false;
      }
    }
    return true;
  }

  function refreshMarkers() {
    let done = 0;
    problems.forEach((section, i) => {
      const ok = isDone(section);
      if (ok) done += 1;
      section.classList.toggle("done", ok);
      if (ok) section.classList.remove("has-error");
      if (tabs[i]) {
        tabs[i].classList.toggle("done", ok);
        if (ok) tabs[i].classList.remove("has-error");
        tabs[i].classList.toggle("flagged", section.classList.contains("flagged"));
      }
    });
    const progress = document.getElementById("group-progress");
    if (progress) progress.textContent = `${done} of ${problems.length} in this group done`;
  }

  function flags() {
    try {
      return new Set(JSON.parse(localStorage.getItem(flagKey) || "[]"));
    } catch (e) {
      return new Set();
    }
  }
  flags().forEach((item) => {
    const section = problems.find((p) => p.dataset.item === item);
    if (section) section.classList.add("flagged");
  });
  function toggleFlag() {
    const section = problems[active];
    const set = flags();
    if (section.classList.toggle("flagged")) set.add(section.dataset.item);
    else set.delete(section.dataset.item);
    try {
      localStorage.setItem(flagKey, JSON.stringify(Array.from(set)));
    } catch (e) {
      /* the flag still shows on this page */
    }
    refreshMarkers();
  }

  function skip() {
    for (let step = 1; step <= problems.length; step += 1) {
      const index = (active + step) % problems.length;
      if (!problems[index].classList.contains("done")) {
        show(index, false);
        problems[index].focus();
        return;
      }
    }
    show(active + 1, false);
    problems[active].focus();
  }

  const VERDICT_KEYS = { v: ["valid", "correct"], i: ["invalid", "incorrect"], u: ["unsure"] };

  function setVerdict(key) {
    const section = problems[active];
    const field = section.querySelector(
      'fieldset[data-scale="validity"], fieldset[data-scale="answer_verdict"]'
    );
    if (!field) return;
    const radio = VERDICT_KEYS[key]
      .map((v) => field.querySelector(`input[type=radio][value="${v}"]`))
      .find(Boolean);
    if (!radio) return;
    setRadio(radio);
    // Anything but "valid" needs a reason: go there.
    const reason = field.querySelector("textarea");
    if (reason && radio.value !== "valid") reason.focus();
  }

  form.addEventListener("input", refreshMarkers);
  form.addEventListener("change", refreshMarkers);
  refreshMarkers();

  document.addEventListener("keydown", (ev) => {
    const target = ev.target;
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      form.requestSubmit();
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.key === "Escape" && isTyping(target)) {
      ev.preventDefault();
      target.blur();
      problems[active].focus();
      return;
    }
    if (!problems.length || form.dataset.submitted) return;
    // A digit on a focused rating sets that rating.
    if (/^[1-5]$/.test(ev.key) && target.type === "radio") {
      const scale = target.closest("fieldset.scale");
      const radio = scale && scale.querySelector(`input[type=radio][value="${ev.key}"]`);
      if (radio) {
        ev.preventDefault();
        setRadio(radio);
        radio.focus();
      }
      return;
    }
    if (isTyping(target)) return;
    if (/^[1-5]$/.test(ev.key)) {
      // Nothing focused: the first scale of the shown problem without a rating.
      const scale = numericScales(problems[active]).find(
        (f) => !f.querySelector("input[type=radio]:checked")
      );
      const radio = scale && scale.querySelector(`input[type=radio][value="${ev.key}"]`);
      if (radio) {
        ev.preventDefault();
        setRadio(radio);
      }
      return;
    }
    if (ev.key in VERDICT_KEYS) {
      ev.preventDefault();
      setVerdict(ev.key);
    } else if (ev.key === "s") {
      ev.preventDefault();
      skip();
    } else if (ev.key === "f") {
      ev.preventDefault();
      toggleFlag();
    } else if (ev.key === "z") {
      ev.preventDefault();
      undo();
    } else if (ev.key === "j") {
      ev.preventDefault();
      show(active + 1, true);
    } else if (ev.key === "k") {
      ev.preventDefault();
      show(active - 1, true);
    }
  });

  // --- Drafts that survive failures --------------------------------------------------------
  // Every edit is kept in this browser (localStorage) until the server confirms it saved it,
  // so a lost session, a refused save or a dead network never loses typed text: the kept copy
  // is sent again after a re-login, on the next edit, or when the page is opened again.
  const groupId = form.dataset.group;
  const submitted = Boolean(form.dataset.submitted);
  const storageKey = `benchforge:review-draft:${groupId}`;
  let editSeq = 0; // bumped by every edit
  let sentSeq = 0; // the edit the request in flight carries
  let savedSeq = 0; // the last edit the server confirmed
  let submitting = false;

  function setStatus(state, text) {
    const el = document.getElementById("save-status");
    if (!el) return;
    el.className = `save-status ${state}`;
    el.textContent = text;
  }

  function keepLocally() {
    const fields = [];
    for (const [name, value] of new FormData(form)) {
      if (name === "csrfmiddlewaretoken" || name.endsWith("-elapsed")) continue;
      fields.push([name, value]);
    }
    try {
      localStorage.setItem(storageKey, JSON.stringify({ at: Date.now(), fields }));
    } catch (e) {
      // Storage full or disabled: the server copy is still attempted.
    }
  }

  function forget() {
    try {
      localStorage.removeItem(storageKey);
    } catch (e) {
      /* nothing kept */
    }
  }

  const sessionLost = () => Boolean(window.BenchForgeSession && window.BenchForgeSession.isLost());
  const LOST_TEXT =
    "Not saved: your session has ended. Log in again; your edits are kept in this browser.";

  function onEdit() {
    if (submitted) return;
    editSeq += 1;
    keepLocally();
    if (sessionLost()) setStatus("error", LOST_TEXT);
    else setStatus("unsaved", "Unsaved changes");
  }
  form.addEventListener("input", onEdit);
  form.addEventListener("change", (ev) => {
    // Typing and clicks already fired "input"; the keyboard shortcuts and the tag picker
    // set values from script and announce them with a synthetic "change".
    if (!ev.isTrusted && ev.target !== form) onEdit();
  });

  function draftSaved() {
    savedSeq = sentSeq;
    if (savedSeq === editSeq) forget();
  }

  form.addEventListener("htmx:beforeRequest", (ev) => {
    if (ev.detail.elt !== form) return;
    if (sessionLost()) {
      // Nothing can reach the server until the re-login; the edit stays in this browser.
      ev.preventDefault();
      setStatus("error", LOST_TEXT);
      return;
    }
    sentSeq = editSeq;
    setStatus("saving", "Saving…");
  });
  form.addEventListener("htmx:responseError", (ev) => {
    if (ev.detail.elt !== form) return;
    const xhr = ev.detail.xhr;
    if (xhr.status === 401) {
      setStatus("error", LOST_TEXT);
      return;
    }
    let reason = "";
    if (xhr.status === 409 || xhr.status === 400) {
      // The server explains (e.g. the group was already submitted) in its status fragment.
      const doc = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
      reason = (doc.body.textContent || "").trim().replace(/^Not saved:\s*/, "");
    }
    if (!reason) reason = `the server answered ${xhr.status} ${xhr.statusText || ""}`.trim();
    setStatus("error", `Not saved: ${reason}. Your edits are kept in this browser.`);
  });
  const networkDown = (ev) => {
    if (ev.detail.elt !== form) return;
    setStatus(
      "error",
      "Not saved: the server could not be reached (network). Your edits are kept in this " +
        "browser and sent again with your next change."
    );
  };
  form.addEventListener("htmx:sendError", networkDown);
  form.addEventListener("htmx:timeout", networkDown);

  // After a re-login: send what was kept.
  document.addEventListener("benchforge:session-restored", () => {
    if (!submitted && editSeq !== savedSeq && window.htmx) window.htmx.trigger(form, "change");
  });

  form.addEventListener("submit", () => {
    submitting = true;
  });
  window.addEventListener("beforeunload", (ev) => {
    if (submitting || submitted || editSeq === savedSeq) return;
    ev.preventDefault();
    ev.returnValue = ""; // older Chromium needs a value to show its dialog
  });

  // Opened again with edits the server never confirmed (closed tab, lost session): put them
  // back and save them.
  (function restoreKept() {
    let kept = null;
    try {
      kept = JSON.parse(localStorage.getItem(storageKey) || "null");
    } catch (e) {
      kept = null;
    }
    if (!kept || !Array.isArray(kept.fields)) return;
    if (submitted) {
      forget();
      return;
    }
    for (const [name, value] of kept.fields) {
      const fields = form.querySelectorAll(`[name="${CSS.escape(name)}"]`);
      fields.forEach((field) => {
        if (field.type === "radio") field.checked = field.value === value;
        else if (field.type === "checkbox") field.checked = true;
        else field.value = value;
      });
    }
    editSeq += 1;
    setStatus("unsaved", "Restored edits kept in this browser; saving…");
    // htmx binds the form's triggers when the document is parsed; send after that.
    const send = () => setTimeout(() => window.htmx && window.htmx.trigger(form, "change"), 0);
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", send);
    else send();
  })();

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
