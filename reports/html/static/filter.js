// Table filtering for the amqpspec report: the only script, optional (pages read fully without it).
// A form.filter[data-table] holds a search box and optionally a select[name=status] and a
// checkbox[name=differ]; rows of the named table are hidden when they do not match.
(function () {
  "use strict";
  function apply(form) {
    var table = document.getElementById(form.getAttribute("data-table"));
    if (!table) { return; }
    var text = form.querySelector("input[type=search]");
    var status = form.querySelector("select[name=status]");
    var differ = form.querySelector("input[name=differ]");
    var needle = text ? text.value.trim().toLowerCase() : "";
    var want = status ? status.value : "";
    var onlyDiffer = differ ? differ.checked : false;
    var rows = table.querySelectorAll("tbody tr:not(.keep)");
    var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i];
      var ok = !needle || row.textContent.toLowerCase().indexOf(needle) !== -1;
      if (ok && want) { ok = (" " + (row.getAttribute("data-status") || "") + " ").indexOf(" " + want + " ") !== -1; }
      if (ok && onlyDiffer) { ok = row.getAttribute("data-differ") === "1"; }
      row.classList.toggle("hidden", !ok);
      if (ok) { shown++; }
    }
    var out = form.querySelector("output");
    if (out) { out.textContent = shown + " of " + rows.length + " rows"; }
  }
  function init() {
    var forms = document.querySelectorAll("form.filter[data-table]");
    for (var i = 0; i < forms.length; i++) {
      (function (form) {
        form.addEventListener("input", function () { apply(form); });
        form.addEventListener("change", function () { apply(form); });
        form.addEventListener("submit", function (e) { e.preventDefault(); apply(form); });
        form.hidden = false;
      })(forms[i]);
    }
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
