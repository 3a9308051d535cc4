/* The question explorer: every gold question, every arm's ranking side by side.
   Data: window.HIERRET_EXPLORER, assigned by _static/explorer-data.js (written by the
   site build from the notebooks' explorer-*.json, hierret.casebook), loaded by a
   <script> element so that the page works from file:// and any static host.
   State: the page's address keeps what is shown (#r=record&t=result&g=target&a=arms
   &q=question&s=search; hierret.study.casebook.explorer_link writes such links), so a
   view can be bookmarked, shared and reached from a casebook question. */
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
  function recordName(r) { return r.toUpperCase().replace(/^DR(?=\d)/, "DR-"); }
  /* Sets of one record, result and target that differ only in their arms are told
     apart by the arms only they hold. */
  function label(entry) {
    var s = entry.set, same = sets.filter(function (o) {
      return o !== entry && o.record === entry.record && o.set.title === s.title &&
        o.set.target === s.target;
    });
    var text = recordName(entry.record) + " · " + s.title + " · " + s.target + " target";
    if (!same.length) {
      return text + " (" + s.questions.length + " questions, " + s.arms.length + " arms)";
    }
    var own = s.arms.filter(function (a) {
      return same.every(function (o) { return o.set.arms.indexOf(a) < 0; });
    });
    var shown = own.slice(0, 3).join(", ") + (own.length > 3 ? ", …" : "");
    return text + " · " + s.arms.length + " arms, with " + shown;
  }
  var pickSet = el("select"); pickSet.id = "hr-set";
  sets.forEach(function (s, i) {
    var o = el("option", label(s)); o.value = String(i); pickSet.appendChild(o);
  });
  var search = el("input"); search.id = "hr-search"; search.type = "search";
  search.placeholder = "Search the questions (text or id)";
  var list = el("select"); list.id = "hr-questions"; list.size = 8;
  var view = el("div"); view.id = "hr-view";
  [el("label", "Comparison"), pickSet, el("label", "Question"), search, list, view]
    .forEach(function (e) { root.appendChild(e); });

  function current() { return sets[Number(pickSet.value)]; }
  function state() {
    var c = current(), parts = {
      r: c.record, t: c.set.title, g: c.set.target, a: c.set.arms.join(","),
      q: list.value || "", s: search.value
    };
    return Object.keys(parts).filter(function (k) { return parts[k]; }).map(function (k) {
      return k + "=" + encodeURIComponent(parts[k]);
    }).join("&");
  }
  function remember() {
    var hash = "#" + state();
    if (location.hash === hash) { return; }
    try { history.replaceState(null, "", hash); } catch (e) { location.replace(hash); }
  }
  function parse(hash) {
    var out = {};
    hash.replace(/^#/, "").split("&").forEach(function (part) {
      var at = part.indexOf("=");
      if (at > 0) {
        try { out[part.slice(0, at)] = decodeURIComponent(part.slice(at + 1)); }
        catch (e) { /* a malformed part is ignored */ }
      }
    });
    return out;
  }
  function restore() {
    var want = parse(location.hash), arms = want.a ? want.a.split(",") : [];
    if (!want.r) { return false; }
    var i = sets.findIndex(function (s) {
      return s.record === want.r && (!want.t || s.set.title === want.t) &&
        (!want.g || s.set.target === want.g) &&
        arms.every(function (a) { return s.set.arms.indexOf(a) >= 0; });
    });
    if (i < 0) { return false; }
    pickSet.value = String(i);
    search.value = want.s || "";
    fill(want.q);
    return true;
  }
  function fill(pick) {
    var s = current().set, q = search.value.toLowerCase();
    list.innerHTML = "";
    s.questions.forEach(function (item) {
      if (q && (item.id + " " + item.text).toLowerCase().indexOf(q) < 0) { return; }
      var o = el("option", item.text + " · " + item.id); o.value = item.id;
      list.appendChild(o);
    });
    if (list.options.length) {
      list.selectedIndex = 0;
      if (pick) { list.value = pick; }
      if (list.selectedIndex < 0) { list.selectedIndex = 0; }
      show(list.value);
    } else { view.innerHTML = ""; view.appendChild(el("p", "No question matches.")); }
    remember();
  }
  function fmt(v) { return typeof v === "number" ? v.toFixed(3) : "—"; }
  function show(qid) {
    var s = current().set, rows = s.rows[qid], item = null;
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
    var note = el("p", "", "hr-scale");
    note.appendChild(document.createTextNode("Each score is on its own arm's scale " +
      "(a cosine for dense arms, a BM25 score, an RRF sum near 0.03, a blend for fused " +
      "search): compare ranks across arms, not scores. "));
    var names = el("a", "What the arm names mean"); names.href = "#reading-the-arm-names";
    note.appendChild(names);
    view.appendChild(note);
  }
  pickSet.addEventListener("change", function () { fill(); });
  search.addEventListener("input", function () { fill(); });
  list.addEventListener("change", function () { show(list.value); remember(); });
  window.addEventListener("hashchange", function () {
    if (location.hash !== "#" + state()) { restore(); }
  });
  if (!restore()) { fill(); }
})();
