// Page behaviours bound by data attributes, so no page needs an inline event handler (the
// Content Security Policy allows none): data-confirm on a form asks before submitting,
// data-autosubmit on a field submits its form when it changes.
document.addEventListener("submit", function (event) {
  var form = event.target.closest("form[data-confirm]");
  if (form && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
}, true);
document.addEventListener("change", function (event) {
  if (event.target.matches("[data-autosubmit]") && event.target.form) {
    event.target.form.submit();
  }
});
