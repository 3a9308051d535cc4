/* The question explorer: every gold question, every arm's ranking side by side.
   Data: window.HIERRET_EXPLORER, assigned by _static/explorer-data.js (written by the
   site build from the notebooks' explorer-*.json, hierret.casebook), loaded by a
   <script> element so that the page works from file:// and any static host. */
(function () {
  "use strict";
  var data = window.HIERRET_EXPLORER || { records: [] };
  var root = document.getElementById("hr-explorer");
  if (!root) { return; }
  var sets = [];
  data.records.forEach(function (rec) {
    rec.sets.forEach(function (s) { sets.push({ record: rec.record, set: s }); });
  });
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }
  if (!sets.length) {
    root.appendChild(el("p", "No explorer data in this build: the notebooks write it " +
      "when the site is built (figures/explorer-*.json)."));
    return;
  }
  var pickSet = el("select"); pickSet.id = "hr-set";
  sets.forEach(function (s, i) {
    var o = el("option", s.record.toUpperCase() + " · " + s.set.title + " · " +
      s.set.target + " target (" + s.set.questions.length + " questions, " +
      s.set.arms.length + " arms)");
    o.value = String(i); pickSet.appendChild(o);
  });
  var search = el("input"); search.id = "hr-search"; search.type = "search";
  search.placeholder = "Search the questions (text or id)";
  var list = el("select"); list.id = "hr-questions"; list.size = 8;
  var view = el("div"); view.id = "hr-view";
  [el("label", "Comparison"), pickSet, el("label", "Question"), search, list, view]
    .forEach(function (e) { root.appendChild(e); });

  function current() { return sets[Number(pickSet.value)].set; }
  function fill() {
    var s = current(), q = search.value.toLowerCase();
    list.innerHTML = "";
    s.questions.forEach(function (item) {
      if (q && (item.id + " " + item.text).toLowerCase().indexOf(q) < 0) { return; }
      var o = el("option", item.id + " · " + item.text); o.value = item.id;
      list.appendChild(o);
    });
    if (list.options.length) { list.selectedIndex = 0; show(list.value); }
    else { view.innerHTML = ""; view.appendChild(el("p", "No question matches.")); }
  }
  function fmt(v) { return typeof v === "number" ? v.toFixed(3) : "—"; }
  function show(qid) {
    var s = current(), rows = s.rows[qid], item = null;
    s.questions.forEach(function (x) { if (x.id === qid) { item = x; } });
    view.innerHTML = "";
    if (!item || !rows) { return; }
    view.appendChild(el("h3", item.text));
    view.appendChild(el("p", "Gold evidence: " + (item.evidence.join("; ") || "—")));
    var table = el("table"), head = el("tr");
    table.className = "hr-rankings";
    head.appendChild(el("th", ""));
    s.arms.forEach(function (a) { head.appendChild(el("th", a)); });
    table.appendChild(head);
    function row(label, cells) {
      var tr = el("tr"); tr.appendChild(el("th", label));
      cells.forEach(function (c) { tr.appendChild(c); }); table.appendChild(tr);
    }
    row("first answer at rank", s.arms.map(function (a) {
      return el("td", rows[a].first === null ? "none ranked" : rows[a].first);
    }));
    s.metrics.forEach(function (m) {
      row(m, s.arms.map(function (a) { return el("td", fmt(rows[a].metrics[m])); }));
    });
    var depth = 0;
    s.arms.forEach(function (a) { depth = Math.max(depth, rows[a].hits.length); });
    for (var i = 0; i < depth; i++) {
      row("rank " + (i + 1), s.arms.map(function (a) {
        var h = rows[a].hits[i];
        if (!h) { return el("td", ""); }
        var td = el("td", (h[2] ? "✓ " : "") + (s.units[h[0]] || h[0]) + " (" +
          h[1].toFixed(3) + ")", h[2] ? "hr-rel" : "");
        td.title = h[0]; return td;
      }));
    }
    view.appendChild(table);
  }
  pickSet.addEventListener("change", fill);
  search.addEventListener("input", fill);
  list.addEventListener("change", function () { show(list.value); });
  fill();
})();
