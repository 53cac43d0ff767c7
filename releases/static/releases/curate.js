// Curator release pages: confirmation dialogs, the next free version of a new draft, and the
// gate rules form kept in step with its JSON view (no inline handlers: the CSP allows none).
(function () {
  "use strict";

  // A button with data-dialog="<id>" opens that <dialog>; data-dialog-close closes its own.
  document.addEventListener("click", function (event) {
    var opener = event.target.closest("[data-dialog]");
    if (opener) {
      var dialog = document.getElementById(opener.dataset.dialog);
      if (dialog && dialog.showModal) {
        event.preventDefault();
        dialog.showModal();
      }
      return;
    }
    var closer = event.target.closest("[data-dialog-close]");
    if (closer) {
      event.preventDefault();
      closer.closest("dialog").close();
    }
  });

  // New draft: the version follows the chosen benchmark's next free version.
  var benchmark = document.getElementById("new-release-benchmark");
  var version = document.getElementById("new-release-version");
  if (benchmark && version) {
    benchmark.addEventListener("change", function () {
      var option = benchmark.options[benchmark.selectedIndex];
      if (option && option.dataset.nextVersion) {
        version.value = option.dataset.nextVersion;
      }
    });
  }

  var form = document.getElementById("rules-form");
  var advanced = document.getElementById("rules-advanced");
  var text = document.getElementById("rules-json");
  var error = document.getElementById("rules-json-error");
  if (!form || !advanced || !text) {
    return;
  }
  var inputs = Array.prototype.slice.call(form.querySelectorAll("[data-rule]"));

  function readField(input) {
    var kind = input.dataset.kind;
    if (kind === "bool") {
      return input.checked;
    }
    var raw = input.value.trim();
    if (raw === "") {
      return null;
    }
    if (kind === "int" || kind === "float") {
      var number = Number(raw);
      return isNaN(number) ? raw : number;
    }
    if (kind === "json") {
      try {
        return JSON.parse(raw);
      } catch (e) {
        return raw;
      }
    }
    return raw;
  }

  function writeField(input, value) {
    var kind = input.dataset.kind;
    if (kind === "bool") {
      input.checked = value === true;
    } else if (value === null || value === undefined) {
      input.value = "";
    } else if (kind === "json") {
      input.value = JSON.stringify(value);
    } else {
      input.value = String(value);
    }
  }

  function formRules() {
    var rules = {};
    inputs.forEach(function (input) {
      rules[input.dataset.rule] = readField(input);
    });
    return rules;
  }

  function lineColumn(source, offset) {
    var before = source.slice(0, offset);
    var lines = before.split("\n");
    return {line: lines.length, column: lines[lines.length - 1].length + 1};
  }

  function offsetOf(source, line, column) {
    var lines = source.split("\n");
    var offset = 0;
    for (var i = 0; i < line - 1 && i < lines.length; i++) {
      offset += lines[i].length + 1;
    }
    return Math.min(source.length, offset + column - 1);
  }

  function showError(message) {
    if (!error) {
      return;
    }
    error.hidden = !message;
    error.textContent = message || "";
  }

  function parses(source) {
    try {
      JSON.parse(source);
      return true;
    } catch (e) {
      return false;
    }
  }

  // The JSON view always shows the form's values, unsaved edits included: a form edit is
  // copied into it at once, and a JSON edit that parses is copied into the form as it is
  // typed. A JSON text that does not parse is kept as typed, so it can be fixed, until the
  // form is edited. Nothing is copied when the view opens: its toggle event comes later than
  // the click that opens it, and copying then would overwrite what was typed meanwhile.
  function formEdited(event) {
    if (event.target.matches("[data-rule]")) {
      text.value = JSON.stringify(formRules(), null, 2);
      showError("");
    }
  }
  form.addEventListener("input", formEdited);
  form.addEventListener("change", formEdited);

  // A JSON edit that parses updates the form; one that does not says where it breaks.
  text.addEventListener("input", function () {
    var data;
    try {
      data = JSON.parse(text.value);
    } catch (e) {
      var match = /position (\d+)/.exec(e.message);
      var where = match ? lineColumn(text.value, Number(match[1])) : null;
      showError("Not valid JSON yet" + (where ? " (line " + where.line + ", column " + where.column + ")" : "") + ".");
      return;
    }
    if (data === null || typeof data !== "object" || Array.isArray(data)) {
      showError("The rules must be a JSON object, {...}.");
      return;
    }
    showError("");
    inputs.forEach(function (input) {
      if (Object.prototype.hasOwnProperty.call(data, input.dataset.rule)) {
        writeField(input, data[input.dataset.rule]);
      }
    });
  });

  // The server refused the JSON: put the caret where it says the error is.
  if (error && error.dataset.line && advanced.open) {
    var at = offsetOf(text.value, Number(error.dataset.line), Number(error.dataset.column));
    text.focus();
    text.setSelectionRange(at, at);
  }
})();
