// kubefit report: sortable tables, copy buttons, every <details> opened for printing. Reads nothing
// from the network and writes no HTML: it only reorders rows and copies text that is already there.
"use strict";
(function () {
  function cellValue(row, i) {
    var text = row.cells[i] ? row.cells[i].textContent.trim() : "";
    var n = Number(text.replace(/[,%\s]/g, ""));
    return text !== "" && !isNaN(n) ? n : text.toLowerCase();
  }
  document.querySelectorAll("table").forEach(function (table) {
    var body = table.tBodies[0];
    if (!body) return;
    Array.prototype.forEach.call(table.tHead ? table.tHead.rows[0].cells : [], function (th, i) {
      th.addEventListener("click", function () {
        var up = !th.classList.contains("sorted-up");
        Array.prototype.forEach.call(th.parentNode.cells, function (c) { c.classList.remove("sorted-up", "sorted-down"); });
        th.classList.add(up ? "sorted-up" : "sorted-down");
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a, i), y = cellValue(b, i);
          var c = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
          return up ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.querySelectorAll("button.copy").forEach(function (button) {
    button.addEventListener("click", function () {
      var text = button.parentNode.querySelector("pre").textContent;
      if (navigator.clipboard) {
        navigator.clipboard.writeText(text).then(function () { button.textContent = "copied"; },
                                                  function () { button.textContent = "select and copy"; });
      }
    });
  });
  var closed = [];
  window.addEventListener("beforeprint", function () {
    closed = Array.prototype.filter.call(document.querySelectorAll("details"), function (d) { return !d.open; });
    closed.forEach(function (d) { d.open = true; });
  });
  window.addEventListener("afterprint", function () { closed.forEach(function (d) { d.open = false; }); });
})();
