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
  // What the server added with a save is subtracted, so time spent while the save was on its
  // way goes with the next one.
  function elapsedNow() {
    return new Map(elapsed);
  }
  function elapsedCounted(sent) {
    problems.forEach((p) => {
      const item = p.dataset.item;
      elapsed.set(item, Math.max(0, elapsed.get(item) - (sent.get(item) || 0)));
      const input = p.querySelector("input.elapsed");
      if (input) input.value = elapsed.get(item).toFixed(3);
    });
  }

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
    // The conflict choice and the login dialog take the keyboard while they are open.
    if (modalOpen()) return;
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

  // --- Drafts: versions, a copy in this browser, retries ------------------------------------
  // Each save carries the draft version it was based on; the server refuses one based on an
  // older version (another tab or window saved since). Answers only the other side changed
  // are taken over, answers only this page changed are kept, and where both changed one answer
  // the reviewer chooses: keep mine (m) or take theirs (t). Until the server holds exactly what
  // the page shows, the answers are kept in this browser (one copy per tab), the page warns
  // before it is left, and failed saves are retried with growing delays. Every answer from the
  // server is read as data: nothing here ever replaces the page with a response.
  const groupId = form.dataset.group;
  const submitted = Boolean(form.dataset.submitted);
  const draftUrl = form.dataset.draftUrl;
  const sessionUrl = form.dataset.sessionUrl;
  const loginUrl = form.dataset.loginUrl;
  const backUrl = form.dataset.backUrl;
  const TIMING = Object.assign(
    {
      debounceMs: 700,
      saveTimeoutMs: 15000,
      submitTimeoutMs: 30000,
      retryBaseMs: 1000,
      retryMaxMs: 30000,
      orphanMs: 6000,
    },
    window.BenchForgeReviewTiming || {}
  );

  function readState() {
    const el = document.getElementById("draft-state");
    try {
      return JSON.parse(el ? el.textContent : "null") || {};
    } catch (e) {
      return {};
    }
  }

  // The form's answers by input name: radios give the checked value ("" for none), the
  // certification "on" or "", everything else its value.
  function snapshot() {
    const out = {};
    for (const el of form.elements) {
      const name = el.name;
      if (!name || name === "csrfmiddlewaretoken" || name === "draft_version") continue;
      if (name.endsWith("-elapsed") || el.tagName === "BUTTON") continue;
      if (el.type === "radio") {
        if (!(name in out)) out[name] = "";
        if (el.checked) out[name] = el.value;
      } else if (el.type === "checkbox") out[name] = el.checked ? "on" : "";
      else out[name] = el.value;
    }
    return out;
  }

  // The server keeps text trimmed and browsers send line breaks as CRLF: compare on that.
  const norm = (v) =>
    String(v === undefined || v === null ? "" : v)
      .replace(/\r\n?/g, "\n")
      .trim();
  function differing(a, b) {
    const names = new Set([...Object.keys(a), ...Object.keys(b)]);
    return Array.from(names).filter((n) => norm(a[n]) !== norm(b[n]));
  }
  const same = (a, b) => differing(a, b).length === 0;

  function setField(name, value) {
    value = value === undefined || value === null ? "" : String(value);
    form.querySelectorAll(`[name="${CSS.escape(name)}"]`).forEach((el) => {
      if (el.type === "radio") el.checked = value !== "" && el.value === value;
      else if (el.type === "checkbox") el.checked = value === "on";
      else el.value = value;
    });
  }

  const initial = readState();
  const labels = initial.labels || {};
  const versionInput = form.querySelector('input[name="draft_version"]');
  // What the server holds, as far as this page knows; the next save is based on its version.
  let server = {
    version: Number(initial.version) || 0,
    fields: initial.fields || snapshot(),
  };
  function adopt(state) {
    server = { version: Number(state.version) || 0, fields: state.fields || {} };
    if (versionInput) versionInput.value = String(server.version);
  }
  const dirty = () => !same(snapshot(), server.fields);

  // While a submit is on its way only the submit speaks (``fromSubmit``).
  function setStatus(state, text, fromSubmit) {
    if (submitting && !fromSubmit) return;
    const el = document.getElementById("save-status");
    if (!el) return;
    el.className = `save-status ${state}`;
    el.textContent = text;
  }

  // A note under the tabs for what changed without a keystroke here (answers taken over from
  // another tab, the group open elsewhere).
  function note(text) {
    let el = document.getElementById("draft-note");
    if (!el) {
      el = document.createElement("p");
      el.id = "draft-note";
      el.className = "draft-note muted small";
      el.setAttribute("aria-live", "polite");
      const nav = form.querySelector(".problem-tabs");
      if (nav) nav.after(el);
      else form.prepend(el);
    }
    el.textContent = text;
  }
  const named = (names) => names.map((n) => labels[n] || n).join("; ");

  // --- the copy in this browser: one per tab, so two tabs never delete each other's ---
  const COPY_PREFIX = `benchforge:review-draft:${groupId}:`;
  const LEGACY_KEY = `benchforge:review-draft:${groupId}`;
  const tabId = (() => {
    const fresh = () => Math.random().toString(36).slice(2, 12);
    try {
      let id = sessionStorage.getItem("benchforge:review-tab");
      if (!id) {
        id = fresh();
        sessionStorage.setItem("benchforge:review-tab", id);
      }
      return id;
    } catch (e) {
      return fresh();
    }
  })();
  const copyKey = COPY_PREFIX + tabId;
  // This page load, as the server knows its saves: versions it saved itself are no conflict.
  const writerId = Math.random().toString(36).slice(2, 14);

  function readCopy(key) {
    try {
      return JSON.parse(localStorage.getItem(key) || "null");
    } catch (e) {
      return null;
    }
  }
  function writeCopy(copy) {
    try {
      localStorage.setItem(copyKey, JSON.stringify(copy));
    } catch (e) {
      // Storage full or disabled: the server copy is still attempted.
    }
  }
  function keepLocally() {
    if (submitted) return;
    writeCopy({
      tab: tabId,
      alive: Date.now(),
      version: server.version,
      base: server.fields,
      fields: snapshot(),
    });
  }
  function forget(key) {
    try {
      localStorage.removeItem(key || copyKey);
    } catch (e) {
      /* nothing kept */
    }
  }
  // A live tab refreshes its copy's heartbeat; a closed one stops (and says so on its way
  // out), so the next page opened on the group takes its copy over.
  setInterval(() => {
    const copy = readCopy(copyKey);
    if (copy) writeCopy(Object.assign(copy, { alive: Date.now() }));
  }, 2000);
  window.addEventListener("pagehide", () => {
    const copy = readCopy(copyKey);
    if (copy) writeCopy(Object.assign(copy, { alive: 0 }));
  });

  // The server holds what the page shows: the copy goes and the page may be left.
  function settle(extra) {
    if (dirty()) {
      keepLocally();
      if (!retryTimer && !saveTimer) scheduleSave(TIMING.debounceMs);
      setStatus("unsaved", "Unsaved changes");
      return;
    }
    forget();
    setStatus("saved", "Draft saved");
    if (extra) note(extra);
  }

  // --- talking to the server ---
  function csrfToken() {
    const input = form.querySelector('input[name="csrfmiddlewaretoken"]');
    return input ? input.value : "";
  }
  // One request with a deadline. Answers: {kind: "answer", status, data, text}, or
  // {kind: "session"} (sent to the login page), {kind: "timeout"}, {kind: "network"}.
  async function request(url, body, timeoutMs, keepalive) {
    const ctl = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ctl.abort();
    }, timeoutMs);
    try {
      const response = await fetch(url, {
        method: body ? "POST" : "GET",
        body: body || undefined,
        credentials: "same-origin",
        cache: "no-store",
        redirect: "manual",
        signal: ctl.signal,
        keepalive: Boolean(keepalive),
        headers: { Accept: "application/json", "X-CSRFToken": csrfToken() },
      });
      if (response.type === "opaqueredirect" || response.status === 401) return { kind: "session" };
      const type = response.headers.get("Content-Type") || "";
      let data = null;
      let text = "";
      if (type.includes("application/json")) {
        try {
          data = await response.json();
        } catch (e) {
          data = null;
        }
      } else if (type.startsWith("text/plain")) {
        // A one-line reason (e.g. a refused character) is worth showing; a traceback is not.
        const body = (await response.text()).trim();
        if (body.length <= 200 && !body.includes("\n")) text = body;
      }
      return { kind: "answer", status: response.status, data, text };
    } catch (e) {
      return { kind: timedOut ? "timeout" : "network" };
    } finally {
      clearTimeout(timer);
    }
  }
  const seconds = (ms) => `${Math.max(1, Math.round(ms / 1000))} s`;
  function failure(res, timeoutMs) {
    if (res.kind === "network") return "the server could not be reached (network)";
    if (res.kind === "timeout") return `the server did not answer within ${seconds(timeoutMs)}`;
    const reason = (res.data && res.data.message) || res.text;
    return `the server answered ${res.status}${reason ? `: ${reason}` : ""}`;
  }

  const sessionLost = () => Boolean(window.BenchForgeSession && window.BenchForgeSession.isLost());
  function markLost() {
    if (window.BenchForgeSession) window.BenchForgeSession.markLost();
  }
  const LOST_TEXT =
    "Not saved: your session has ended. Log in again; your edits are kept in this browser.";

  // --- saving ---
  let saveTimer = null;
  let retryTimer = null;
  let retryDelay = 0;
  let current = null; // the save under way (a promise)
  let again = false; // edits arrived while a save was under way
  let syncWanted = false; // another tab saved while this one was busy
  let tokenRetried = false;
  let submitting = false;
  let held = false; // a submit waiting for the reviewer to log in again
  let leaving = false;
  let conflictOpen = false;
  let unloading = false; // the browser is leaving the page (a link, the address bar)

  function scheduleSave(delay) {
    clearTimeout(saveTimer);
    saveTimer = setTimeout(() => {
      saveTimer = null;
      save();
    }, delay);
  }
  function retryLater(reason) {
    keepLocally();
    retryDelay = retryDelay ? Math.min(retryDelay * 2, TIMING.retryMaxMs) : TIMING.retryBaseMs;
    setStatus(
      "error",
      `Not saved: ${reason}. Retrying in ${seconds(retryDelay)}; your edits are kept in this browser.`
    );
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => {
      retryTimer = null;
      save();
    }, retryDelay);
  }

  function save() {
    if (current) {
      again = true;
      return current;
    }
    current = saveOnce().finally(() => {
      current = null;
      if (submitting || conflictOpen) return;
      if (syncWanted) {
        syncWanted = false;
        sync();
      } else if (again) {
        again = false;
        if (!retryTimer) scheduleSave(0);
      }
    });
    return current;
  }

  async function saveOnce() {
    again = false;
    if (submitted || submitting || conflictOpen) return;
    if (sessionLost()) {
      keepLocally();
      setStatus("error", LOST_TEXT);
      return;
    }
    if (!dirty()) {
      settle();
      return;
    }
    clearTimeout(saveTimer);
    saveTimer = null;
    const sent = snapshot();
    const sentTime = elapsedNow();
    const body = formBody();
    setStatus("saving", "Saving…");
    const res = await request(draftUrl, body, TIMING.saveTimeoutMs);
    const data = res.data || {};
    if (res.kind === "session") {
      keepLocally();
      markLost();
      setStatus("error", LOST_TEXT);
      return;
    }
    if (res.kind !== "answer") {
      retryLater(failure(res, TIMING.saveTimeoutMs));
      return;
    }
    if (res.status === 403 && !tokenRetried) {
      // A stale CSRF token (a re-login elsewhere rotates it): fetch the new one, try once more.
      tokenRetried = true;
      if (window.BenchForgeSession) await window.BenchForgeSession.check();
      again = true;
      return;
    }
    tokenRetried = false;
    if (res.status === 200 && data.state === "saved") {
      retryDelay = 0;
      adopt(data);
      elapsedCounted(sentTime);
      announce({ type: "saved", version: server.version });
      const kept = differing(sent, server.fields);
      if (kept.length && same(sent, snapshot())) {
        // The server answered "saved" yet holds something else: never claim it, keep ours.
        keepLocally();
        setStatus("error", `Not saved as shown: ${named(kept)}. Your edits are kept in this browser.`);
        return;
      }
      settle();
      return;
    }
    if (res.status === 422 && data.state === "refused") {
      // The valid part is stored; the refused value stays here (and in this browser's copy).
      retryDelay = 0;
      adopt(data);
      elapsedCounted(sentTime);
      keepLocally();
      setStatus("error", `${data.message}. Your edits are kept in this browser.`);
      return;
    }
    if (res.status === 409 && data.state === "conflict") {
      retryDelay = 0;
      reconcile(data, "save");
      return;
    }
    if (res.status === 409 || res.status === 404 || res.status === 400) {
      // Retrying cannot help (submitted, closed, not in the queue, refused): say so, keep all.
      retryDelay = 0;
      keepLocally();
      const reason = data.message || `Not saved: ${failure(res)}`;
      setStatus("error", `${reason.replace(/\.$/, "")}. Your edits are kept in this browser.`);
      return;
    }
    retryLater(failure(res));
  }

  function formBody() {
    const body = new FormData(form);
    body.set("draft_version", String(server.version));
    body.set("draft_writer", writerId);
    return body;
  }

  function onEdit() {
    if (submitted) return;
    keepLocally();
    if (conflictOpen) return; // the choice comes first; the edit is kept meanwhile
    if (sessionLost()) {
      setStatus("error", LOST_TEXT);
      return;
    }
    // An edit is a natural moment to try again: no need to wait out a retry delay.
    clearTimeout(retryTimer);
    retryTimer = null;
    setStatus("unsaved", "Unsaved changes");
    scheduleSave(TIMING.debounceMs);
  }
  form.addEventListener("input", onEdit);
  form.addEventListener("change", (ev) => {
    // Typing and clicks already fired "input"; the keyboard shortcuts and the tag picker
    // set values from script and announce them with a synthetic "change".
    if (!ev.isTrusted && ev.target !== form) onEdit();
  });
  window.addEventListener("online", () => {
    if (retryTimer) {
      clearTimeout(retryTimer);
      retryTimer = null;
      save();
    }
  });

  // --- two tabs or windows on one group ---
  // ``theirs``: what the server holds now. Answers only they changed are taken over, answers
  // only this page changed are kept, answers both changed differently are the reviewer's
  // choice. ``why``: "save" (a save was refused), "sync" (caught up), "submit".
  function reconcile(theirs, why) {
    const base = server.fields;
    const mine = snapshot();
    const taken = [];
    const conflicts = [];
    for (const name of new Set([...Object.keys(mine), ...Object.keys(theirs.fields || {})])) {
      const b = norm(base[name]);
      const m = norm(mine[name]);
      const t = norm(theirs.fields[name]);
      if (m === t) continue;
      if (m === b) {
        setField(name, theirs.fields[name]);
        taken.push(name);
      } else if (t !== b) conflicts.push(name);
    }
    adopt(theirs);
    if (taken.length) {
      refreshMarkers();
      note(`Updated with answers saved in another tab or window: ${named(taken)}.`);
    }
    if (conflicts.length) {
      openConflict(conflicts, mine, theirs.fields);
      return;
    }
    if (why === "submit") {
      keepLocally();
      setStatus(
        "unsaved",
        "Not submitted: answers were saved in another tab or window and are merged here. " +
          "Check them, then press Ctrl+Enter to submit."
      );
      if (dirty()) scheduleSave(0);
      return;
    }
    if (dirty()) {
      keepLocally();
      setStatus("unsaved", "Unsaved changes");
      scheduleSave(0);
    } else settle();
  }

  let syncing = false;
  async function sync() {
    if (submitted || submitting || held || conflictOpen || syncing || sessionLost()) return;
    if (current) {
      syncWanted = true;
      return;
    }
    syncing = true;
    const res = await request(draftUrl, null, TIMING.saveTimeoutMs);
    syncing = false;
    if (res.kind === "session") {
      markLost();
      return;
    }
    if (res.kind !== "answer" || res.status !== 200 || !res.data) return;
    if (res.data.submitted) {
      note("This group was submitted from another tab or window; its answers are locked.");
      return;
    }
    if (Number(res.data.version) === server.version) return;
    if (current || conflictOpen || submitting) {
      syncWanted = true;
      return;
    }
    reconcile(res.data, "sync");
  }
  window.addEventListener("focus", () => sync());
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") sync();
  });

  const channel =
    "BroadcastChannel" in window && !submitted
      ? new BroadcastChannel(`benchforge:review:${groupId}`)
      : null;
  function announce(message) {
    if (channel) channel.postMessage(Object.assign({ tab: tabId }, message));
  }
  if (channel) {
    channel.onmessage = (ev) => {
      const message = ev.data || {};
      if (message.tab === tabId) return;
      if (message.type === "hello" || message.type === "here") {
        if (message.type === "hello") announce({ type: "here" });
        note(
          "This group is also open in another tab. Saves from both are merged; where both " +
            "change one answer, you choose which to keep."
        );
      } else if (message.type === "saved" && Number(message.version) !== server.version) sync();
      else if (message.type === "submitted") sync();
    };
    announce({ type: "hello" });
  }

  // --- the choice: keep mine / take theirs ---
  const shown = (name, value) => {
    const v = norm(value);
    if (name === "certify_no_ai") return v === "on" ? "certified" : "not certified";
    return v === "" ? "(empty)" : v;
  };
  function openConflict(names, mine, theirs) {
    conflictOpen = true;
    clearTimeout(saveTimer);
    saveTimer = null;
    // The form holds this page's answers, so "keep mine" leaves it as it is.
    names.forEach((name) => setField(name, mine[name]));
    refreshMarkers();
    keepLocally();
    setStatus(
      "error",
      "Not saved: these answers changed in another tab or window too. Choose which to keep; " +
        "yours stay in this browser until then."
    );
    let box = document.getElementById("draft-conflict");
    if (box) box.remove();
    box = document.createElement("section");
    box.id = "draft-conflict";
    box.className = "card draft-conflict";
    box.setAttribute("role", "alertdialog");
    box.setAttribute("aria-labelledby", "draft-conflict-title");
    const title = document.createElement("h2");
    title.id = "draft-conflict-title";
    title.textContent = "Changed in another tab or window";
    const text = document.createElement("p");
    text.textContent =
      "Since this page last saved, another tab or window saved different answers here. " +
      "Nothing has been overwritten. Keep yours, or take the ones saved there.";
    const table = document.createElement("table");
    table.className = "conflict-table";
    const head = table.createTHead().insertRow();
    ["Answer", "Yours (this page)", "Saved elsewhere (newer)"].forEach((h) => {
      const th = document.createElement("th");
      th.textContent = h;
      head.append(th);
    });
    const body = table.createTBody();
    names.forEach((name) => {
      const row = body.insertRow();
      row.className = "conflict-row";
      const th = document.createElement("th");
      th.textContent = labels[name] || name;
      row.append(th);
      const a = row.insertCell();
      a.className = "mine";
      a.textContent = shown(name, mine[name]);
      const b = row.insertCell();
      b.className = "theirs";
      b.textContent = shown(name, theirs[name]);
    });
    const choice = document.createElement("p");
    choice.className = "conflict-choice";
    const button = (which, label, key, primary) => {
      const el = document.createElement("button");
      el.type = "button";
      el.dataset.choice = which;
      if (primary) el.className = "primary";
      el.append(`${label} `);
      const kbd = document.createElement("kbd");
      kbd.textContent = key;
      el.append(kbd);
      el.addEventListener("click", () => choose(which, names, theirs));
      return el;
    };
    choice.append(
      button("mine", "Keep mine", "m", true),
      " ",
      button("theirs", "Take theirs", "t", false)
    );
    box.append(title, text, table, choice);
    form.before(box);
    box.scrollIntoView({ block: "nearest" });
    box.querySelector("button").focus({ preventScroll: true });
  }

  function choose(which, names, theirs) {
    if (!conflictOpen) return;
    if (which === "theirs") names.forEach((name) => setField(name, theirs[name]));
    conflictOpen = false;
    const box = document.getElementById("draft-conflict");
    if (box) box.remove();
    refreshMarkers();
    note(
      which === "theirs"
        ? `Took the answers saved elsewhere: ${named(names)}.`
        : `Kept your answers: ${named(names)}.`
    );
    if (problems[active]) problems[active].focus({ preventScroll: true });
    if (dirty()) {
      keepLocally();
      save();
    } else settle();
  }

  document.addEventListener(
    "keydown",
    (ev) => {
      if (!conflictOpen || ev.ctrlKey || ev.metaKey || ev.altKey || isTyping(ev.target)) return;
      const box = document.getElementById("draft-conflict");
      if (!box) return;
      const key = ev.key.toLowerCase();
      if (key !== "m" && key !== "t") return;
      ev.preventDefault();
      ev.stopImmediatePropagation();
      box.querySelector(`button[data-choice="${key === "m" ? "mine" : "theirs"}"]`).click();
    },
    true
  );

  function modalOpen() {
    const login = document.getElementById("login-dialog");
    return conflictOpen || Boolean(login && login.open);
  }

  // --- submitting ---
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    submitGroup();
  });

  function submitGroup() {
    // One submit at a time: a second Ctrl+Enter while one is on its way does nothing.
    if (submitted || submitting || leaving) return;
    if (conflictOpen) {
      const box = document.getElementById("draft-conflict");
      if (box) box.querySelector("button").focus();
      return;
    }
    // A submit never lands on a login page: with the session gone it waits in this page.
    if (held || sessionLost()) {
      hold();
      return;
    }
    clearTimeout(saveTimer);
    saveTimer = null;
    clearTimeout(retryTimer);
    retryTimer = null;
    keepLocally();
    submitting = true;
    setStatus("saving", "Submitting…", true);
    // Sent at once, and kept going if the page is left meanwhile (keepalive, for bodies of
    // the size it allows). A save still on its way is this page's own: no conflict.
    const body = formBody();
    let size = 0;
    for (const [name, value] of body) size += name.length + String(value).length * 3 + 100;
    const sentTime = elapsedNow();
    request(form.action, body, TIMING.submitTimeoutMs, size < 60000).then((res) =>
      submitAnswered(res, sentTime)
    );
  }

  async function submitAnswered(res, sentTime) {
    const data = res.data || {};
    if (res.kind === "answer" && res.status === 200 && data.state === "submitted") {
      leaving = true;
      forget();
      announce({ type: "submitted" });
      // Already on the way to another page: the submit has landed, go where the browser goes.
      if (unloading) {
        setStatus("saved", "Submitted.", true);
        return;
      }
      setStatus("saved", "Submitted; opening the next group…", true);
      window.location.assign(data.next);
      return; // stays "submitting": nothing more is sent from this page
    }
    submitting = false;
    if (res.kind === "session") {
      hold();
      return;
    }
    const tryAgain = " Your answers are kept in this browser; press Ctrl+Enter to try again.";
    if (res.kind !== "answer") {
      keepLocally();
      setStatus("error", `Not submitted: ${failure(res, TIMING.submitTimeoutMs)}.${tryAgain}`);
      return;
    }
    if (res.status === 403 && !tokenRetried) {
      tokenRetried = true;
      if (window.BenchForgeSession) await window.BenchForgeSession.check();
      submitGroup();
      return;
    }
    tokenRetried = false;
    if (res.status === 400 && data.state === "invalid") {
      adopt(data);
      elapsedCounted(sentTime);
      showSubmitErrors(data);
      if (dirty()) keepLocally();
      else forget();
      setStatus("error", "Not submitted: some answers need attention.");
      return;
    }
    if (res.status === 409 && data.state === "conflict") {
      if (conflictOpen) {
        setStatus("error", "Not submitted: first choose which answers to keep, then submit.");
      } else reconcile(data, "submit");
      return;
    }
    keepLocally();
    const reason = data.message || failure(res);
    setStatus("error", `Not submitted: ${reason.replace(/\.$/, "")}.${tryAgain}`);
  }

  // The refused submit's errors, marked as the server marks them on a page without script.
  function showSubmitErrors(data) {
    const errors = data.errors || {};
    form.querySelectorAll(".field-errors").forEach((el) => el.remove());
    let first = -1;
    problems.forEach((section, i) => {
      section.classList.remove("has-error");
      if (tabs[i]) tabs[i].classList.remove("has-error");
      const list = errors[section.dataset.item];
      if (!list || !list.length) return;
      section.classList.add("has-error");
      if (tabs[i]) {
        tabs[i].classList.add("has-error");
        tabs[i].title = "needs attention";
      }
      const ul = document.createElement("ul");
      ul.className = "error field-errors";
      ul.setAttribute("role", "alert");
      list.forEach(([label, message]) => {
        const li = document.createElement("li");
        const b = document.createElement("b");
        b.textContent = label;
        li.append(b, `: ${message}`);
        ul.append(li);
      });
      const where = section.querySelector(".rating-form") || section;
      where.append(ul);
      if (first < 0) first = i;
    });
    let alert = document.getElementById("submit-errors");
    if (!alert) {
      alert = document.createElement("p");
      alert.id = "submit-errors";
      alert.className = "error";
      alert.setAttribute("role", "alert");
      form.before(alert);
    }
    alert.textContent = data.message;
    const certify = form.querySelector(".certify");
    let certifyError = certify && certify.querySelector("p.error");
    if (data.certify_error && certify) {
      if (!certifyError) {
        certifyError = document.createElement("p");
        certifyError.className = "error";
        certify.querySelector("label").after(certifyError);
      }
      certifyError.textContent = data.certify_error;
    } else if (certifyError) certifyError.remove();
    if (first >= 0) {
      show(first, false);
      const list = problems[first].querySelector(".field-errors");
      if (list) list.scrollIntoView({ block: "center" });
    }
  }

  // --- a submit held while the session is gone: log in inside the page ---
  function hold() {
    held = true;
    keepLocally();
    markLost();
    setStatus(
      "error",
      "Not submitted yet: your session has ended. Log in here; the group is sent as soon as you do."
    );
    openLogin();
  }

  function openLogin() {
    let dialog = document.getElementById("login-dialog");
    if (!dialog) {
      dialog = document.createElement("dialog");
      dialog.id = "login-dialog";
      dialog.className = "login-dialog";
      dialog.setAttribute("aria-labelledby", "login-dialog-title");
      const box = document.createElement("form");
      box.method = "dialog";
      const title = document.createElement("h2");
      title.id = "login-dialog-title";
      title.textContent = "Log in to send this group";
      const text = document.createElement("p");
      text.textContent =
        "Your session has ended. Nothing was lost: your answers are held in this page and " +
        "sent as soon as you log in.";
      const field = (label, name, type, autocomplete) => {
        const wrap = document.createElement("label");
        wrap.append(label, " ");
        const input = document.createElement("input");
        input.name = name;
        input.type = type;
        input.required = true;
        input.autocomplete = autocomplete;
        wrap.append(input);
        return wrap;
      };
      const user = field("Username", "username", "text", "username");
      user.querySelector("input").value = form.dataset.username || "";
      const pass = field("Password", "password", "password", "current-password");
      const error = document.createElement("p");
      error.className = "error login-error";
      error.setAttribute("role", "alert");
      error.hidden = true;
      const actions = document.createElement("p");
      const go = document.createElement("button");
      go.type = "submit";
      go.className = "primary";
      go.textContent = "Log in and submit";
      const cancel = document.createElement("button");
      cancel.type = "button";
      cancel.textContent = "Not now";
      cancel.addEventListener("click", () => dialog.close());
      actions.append(go, " ", cancel);
      box.append(title, text, user, pass, error, actions);
      dialog.append(box);
      box.addEventListener("submit", (ev) => {
        ev.preventDefault();
        logIn(dialog);
      });
      document.body.append(dialog);
    }
    if (!dialog.open) dialog.showModal();
    const password = dialog.querySelector('input[name="password"]');
    const username = dialog.querySelector('input[name="username"]');
    (username.value ? password : username).focus();
  }

  async function logIn(dialog) {
    const error = dialog.querySelector(".login-error");
    const go = dialog.querySelector('button[type="submit"]');
    const say = (text) => {
      error.textContent = text;
      error.hidden = false;
      go.disabled = false;
    };
    error.hidden = true;
    go.disabled = true;
    const state = await request(sessionUrl, null, TIMING.saveTimeoutMs);
    if (state.kind !== "answer" || !state.data) {
      say(`Not logged in: ${failure(state, TIMING.saveTimeoutMs)}. Try again.`);
      return;
    }
    if (!state.data.authenticated) {
      const body = new URLSearchParams({
        csrfmiddlewaretoken: state.data.csrf_token,
        username: dialog.querySelector('input[name="username"]').value,
        password: dialog.querySelector('input[name="password"]').value,
        next: backUrl,
      });
      let response;
      try {
        response = await fetch(loginUrl, {
          method: "POST",
          body,
          credentials: "same-origin",
          redirect: "manual",
          headers: { "X-CSRFToken": state.data.csrf_token },
        });
      } catch (e) {
        say("Not logged in: the server could not be reached (network). Try again.");
        return;
      }
      // Django's login answers a success with a redirect, a refusal with its form again.
      if (response.type !== "opaqueredirect") {
        say(
          response.status === 200
            ? "Your username and password did not match. Please try again."
            : `Not logged in: the server answered ${response.status}. Try again in a while.`
        );
        return;
      }
    }
    go.disabled = false;
    dialog.querySelector('input[name="password"]').value = "";
    // Adopt the new session's CSRF token; the "restored" event below sends what was held.
    if (window.BenchForgeSession) await window.BenchForgeSession.check();
    if (held) resume();
  }

  function resume() {
    held = false;
    const dialog = document.getElementById("login-dialog");
    if (dialog && dialog.open) dialog.close();
    submitGroup();
  }

  // After a re-login (here or in another tab): send what was held or kept.
  document.addEventListener("benchforge:session-restored", () => {
    if (submitted) return;
    if (held) resume();
    else if (dirty()) save();
  });

  window.addEventListener("beforeunload", (ev) => {
    // A submit on its way goes on without the page (keepalive); the copy stays until it lands.
    if (submitted || leaving || submitting || (!held && !current && !dirty())) {
      unloading = true;
      return;
    }
    ev.preventDefault();
    ev.returnValue = ""; // older Chromium needs a value to show its dialog
  });
  window.addEventListener("pageshow", () => {
    unloading = false;
  });

  // --- opened again: take back what this browser kept ---
  // This tab's own copy (a reload), and copies of tabs that are gone (closed with edits the
  // server never confirmed). Each is merged like a refused save: answers changed only in the
  // copy come back, answers changed in both are the reviewer's choice.
  (function restoreKept() {
    const keys = [];
    try {
      for (let i = 0; i < localStorage.length; i += 1) keys.push(localStorage.key(i));
    } catch (e) {
      return;
    }
    const mine = keys.filter((k) => k === LEGACY_KEY || (k && k.startsWith(COPY_PREFIX)));
    if (submitted) {
      mine.forEach((k) => forget(k));
      return;
    }
    const now = Date.now();
    const copies = [];
    for (const key of mine) {
      const copy = readCopy(key);
      if (!copy || !copy.fields) continue;
      if (key === LEGACY_KEY && Array.isArray(copy.fields)) {
        // Kept by an older version of this page: the edits it held, over what is shown.
        const fields = snapshot();
        copy.fields.forEach(([name, value]) => (fields[name] = value));
        copies.push({ key, at: copy.at || 0, base: server.fields, fields });
      } else if (key === copyKey || !copy.alive || now - copy.alive > TIMING.orphanMs) {
        copies.push({ key, at: copy.alive || 0, base: copy.base || server.fields, fields: copy.fields });
      }
    }
    if (!copies.length) return;
    copies.sort((a, b) => a.at - b.at);
    const wanted = {};
    const conflicts = new Set();
    for (const copy of copies) {
      for (const name of Object.keys(copy.fields)) {
        const b = norm(copy.base[name]);
        const m = norm(copy.fields[name]);
        const t = norm(server.fields[name]);
        if (m === t || m === b) continue;
        wanted[name] = copy.fields[name];
        if (t !== b) conflicts.add(name);
      }
    }
    const names = Object.keys(wanted);
    // Other tabs' copies go once this tab's copy holds what they had.
    const adopted = () => copies.forEach((copy) => copy.key !== copyKey && forget(copy.key));
    if (!names.length) {
      forget();
      adopted();
      return;
    }
    names.filter((n) => !conflicts.has(n)).forEach((n) => setField(n, wanted[n]));
    if (conflicts.size) {
      openConflict(Array.from(conflicts), wanted, server.fields);
      adopted();
      return;
    }
    refreshMarkers();
    keepLocally();
    adopted();
    note(`Restored edits kept in this browser: ${named(names)}.`);
    setStatus("unsaved", "Restored edits kept in this browser; saving…");
    setTimeout(save, 0);
  })();

  // A page refused for a conflict without script (both versions listed above the form):
  // with script, the same choice.
  if (form.dataset.conflict && !conflictOpen) {
    const names = differing(snapshot(), server.fields);
    if (names.length) openConflict(names, snapshot(), server.fields);
  }

  // django-htmx's debug mode replaces the whole document with any 4xx/5xx an htmx request
  // gets (the tag suggestions are htmx): stop such answers here, the page stays.
  form.addEventListener("htmx:beforeOnLoad", (ev) => {
    if (ev.detail.xhr && ev.detail.xhr.status >= 400) ev.stopPropagation();
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
