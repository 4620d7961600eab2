// The pairs and clusters views of a simhash report. Texts are user data: they are only
// ever set as textContent or text nodes, never parsed as HTML.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var docs = data.docs;
  var isDedup = data.command === "dedup";
  var labels = isDedup ? ["removed", "kept"] : ["record", "matches"];
  var jaccard = data.measure === "jaccard";
  // Word-level LCS over at most this many cells; past it, a word is "shared" when the
  // other text has it at all.
  var LCS_CELLS = 4000000;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function words(text) { return text.split(/(\s+)/).filter(function (t) { return t.length > 0; }); }
  function isSpace(t) { return /^\s+$/.test(t); }
  function key(t) { return t.toLowerCase(); }

  // For each word of a and of b, whether it is in a longest common subsequence.
  function shared(a, b) {
    var wa = [], wb = [], i, j;
    for (i = 0; i < a.length; i++) if (!isSpace(a[i])) wa.push(i);
    for (j = 0; j < b.length; j++) if (!isSpace(b[j])) wb.push(j);
    var ma = new Array(a.length).fill(false), mb = new Array(b.length).fill(false);
    var n = wa.length, m = wb.length;
    if (n * m > LCS_CELLS) {
      var sa = new Set(wa.map(function (i) { return key(a[i]); }));
      var sb = new Set(wb.map(function (j) { return key(b[j]); }));
      wa.forEach(function (i) { ma[i] = sb.has(key(a[i])); });
      wb.forEach(function (j) { mb[j] = sa.has(key(b[j])); });
      return [ma, mb];
    }
    var w = m + 1, t = new Uint32Array((n + 1) * w);
    for (i = n - 1; i >= 0; i--) {
      for (j = m - 1; j >= 0; j--) {
        t[i * w + j] = key(a[wa[i]]) === key(b[wb[j]]) ? t[(i + 1) * w + j + 1] + 1
          : Math.max(t[(i + 1) * w + j], t[i * w + j + 1]);
      }
    }
    i = 0; j = 0;
    while (i < n && j < m) {
      if (key(a[wa[i]]) === key(b[wb[j]])) { ma[wa[i]] = true; mb[wb[j]] = true; i++; j++; }
      else if (t[(i + 1) * w + j] >= t[i * w + j + 1]) i++;
      else j++;
    }
    return [ma, mb];
  }

  function textBox(doc, tokens, marks) {
    var box = el("div", "text");
    if (doc.text === null) { box.appendChild(el("span", "missing", "(text not available)")); return box; }
    for (var i = 0; i < tokens.length; i++) {
      if (isSpace(tokens[i]) || !marks) box.appendChild(document.createTextNode(tokens[i]));
      else box.appendChild(el("span", marks[i] ? "same" : "diff", tokens[i]));
    }
    if (doc.chars > data.text_chars) {
      box.appendChild(el("span", "cut", " … [cut: " + data.text_chars + " of " + doc.chars + " characters shown]"));
    }
    return box;
  }

  function side(label, doc, tokens, marks, cls) {
    var s = el("div", "side " + cls);
    s.appendChild(el("div", "side-label", label + ": " + doc.id + "  (" + doc.shard + ")"));
    s.appendChild(textBox(doc, tokens, marks));
    return s;
  }

  function sides(a, b, la, lb) {
    var ta = a.text === null ? [] : words(a.text), tb = b.text === null ? [] : words(b.text);
    var marks = (a.text !== null && b.text !== null) ? shared(ta, tb) : [null, null];
    var g = el("div", "sides");
    g.appendChild(side(la, a, ta, marks[0], "side-a"));
    g.appendChild(side(lb, b, tb, marks[1], "side-b"));
    return g;
  }

  function scoreText(s) { return jaccard ? "Jaccard " + s : s + " bits apart"; }

  // The pairs view: filters by id and by similarity.
  var list = document.getElementById("pairs-list");
  var controls = document.getElementById("pairs-controls");
  var idBox = el("input"); idBox.type = "text"; idBox.placeholder = "id contains…"; idBox.id = "filter-id";
  var lo = el("input"); lo.type = "number"; lo.step = jaccard ? "0.01" : "1"; lo.id = "filter-min";
  var hi = el("input"); hi.type = "number"; hi.step = jaccard ? "0.01" : "1"; hi.id = "filter-max";
  // Minhash: the relation of each pair, and a filter by it: one option per relation the
  // sampled pairs have (`overlap` too, in components mode), in the relations' order.
  var relBox = el("select"); relBox.id = "filter-relation";
  var seen = {};
  data.pairs.forEach(function (p) { if (p[3]) seen[p[3]] = true; });
  [""].concat(["same", "template", "overlap"].filter(function (r) { return seen[r]; })).forEach(function (r) {
    var o = el("option", null, r === "" ? "any" : r); o.value = r; relBox.appendChild(o);
  });
  var count = el("span", "count");
  var legend = el("span", "legend");
  legend.appendChild(el("span", "same", "shared words")); legend.appendChild(el("span", "diff", "differences"));
  var filters = [["id ", idBox], [(jaccard ? "Jaccard" : "distance") + " from ", lo], [" to ", hi]];
  if (jaccard) filters.push([" relation ", relBox]);
  filters.forEach(function (p) {
    var l = el("label", null, p[0]); l.appendChild(p[1]); controls.appendChild(l);
  });
  controls.appendChild(count); controls.appendChild(legend);

  // Labelling (see docs/audit.md): the labels of JUDGING.md per pair, kept in the browser's
  // storage under the run id, exported as JSONL for `simhash audit`.
  var LABELS = [["DUP", "same document"], ["TEMPLATE", "template sibling"],
    ["DISTINCT", "distinct document"], ["UNSURE", "unsure"]];
  var LABEL_NAME = {};
  LABELS.forEach(function (l) { LABEL_NAME[l[0]] = l[1]; });
  var runId = data.run_id || "";
  var storeKey = "simhash-labels:" + runId;
  var store = null, saved = {};
  try { store = window.localStorage; saved = JSON.parse(store.getItem(storeKey) || "{}") || {}; }
  catch (e) { store = null; saved = {}; }
  var labelControls = document.getElementById("label-controls");
  var progress = el("span", "progress"); progress.id = "label-progress";
  var reveal = el("input"); reveal.type = "checkbox"; reveal.id = "reveal";
  var revealLabel = el("label", null, " show similarity and relation before labelling");
  revealLabel.insertBefore(reveal, revealLabel.firstChild);
  var orderBox = el("select"); orderBox.id = "order";
  [["labelling", "for labelling (buckets in turn)"], ["similarity", "by similarity"]].forEach(function (o) {
    var opt = el("option", null, o[1]); opt.value = o[0]; orderBox.appendChild(opt);
  });
  var orderLabel = el("label", null, "order ");
  orderLabel.appendChild(orderBox);
  var exportButton = el("button", null, "export labels"); exportButton.type = "button"; exportButton.id = "export";
  var storeNote = el("span", "note", store ? "" : "this browser keeps no labels across reloads: export before leaving");
  [progress, orderLabel, revealLabel, exportButton, storeNote].forEach(function (e) { labelControls.appendChild(e); });

  var cards = data.pairs.map(function (p, i) {
    var a = docs[p[0]], b = docs[p[1]];
    var card = el("div", "pair");
    card.setAttribute("data-index", String(i));
    card.setAttribute("data-removed", a.id);
    card.setAttribute("data-kept", b.id);
    card.setAttribute("data-score", p[2]);
    if (p[3]) card.setAttribute("data-relation", p[3]);
    var head = el("div", "pair-head");
    head.appendChild(el("b", null, labels[0] + " " + a.id));
    head.appendChild(el("span", null, (isDedup ? "duplicate of " : "matches ") + b.id));
    head.appendChild(el("span", "secret", scoreText(p[2])));
    if (p[3]) head.appendChild(el("span", "relation secret", p[3]));
    card.appendChild(head);
    var bar = el("div", "label-bar");
    var c = { card: card, index: i, a: a.full || a.id, b: b.full || b.id, score: parseFloat(p[2]), relation: p[3] || "", buttons: {} };
    LABELS.forEach(function (l, k) {
      var button = el("button", null, (k + 1) + " " + l[1]);
      button.type = "button";
      button.setAttribute("data-label", l[0]);
      button.addEventListener("click", function () { setCurrent(c); setLabel(c, l[0]); });
      bar.appendChild(button);
      c.buttons[l[0]] = button;
    });
    card.appendChild(bar);
    card.appendChild(sides(a, b, labels[0], labels[1]));
    card.addEventListener("click", function () { setCurrent(c); });
    return c;
  });
  if (cards.length === 0) {
    list.appendChild(el("p", null, "No pairs."));
    labelControls.style.display = "none";
    document.getElementById("label-keys").style.display = "none";
  }

  function labelOf(c) { return Object.prototype.hasOwnProperty.call(saved, String(c.index)) ? saved[String(c.index)] : null; }
  function show(c) {
    var l = labelOf(c);
    c.card.classList.toggle("labelled", l !== null);
    if (l !== null) c.card.setAttribute("data-label", l); else c.card.removeAttribute("data-label");
    LABELS.forEach(function (x) { c.buttons[x[0]].classList.toggle("chosen", x[0] === l); });
  }
  function save() {
    if (!store) return;
    try { store.setItem(storeKey, JSON.stringify(saved)); } catch (e) { storeNote.textContent = "labels could not be kept in this browser: export them"; }
  }
  function countLabels() {
    var n = 0;
    cards.forEach(function (c) { if (labelOf(c) !== null) n++; });
    progress.textContent = n + " of " + cards.length + " labelled";
  }
  function setLabel(c, label) {
    if (label === null) delete saved[String(c.index)]; else saved[String(c.index)] = label;
    save(); show(c); countLabels();
  }
  // Stored labels that are not labels of a pair of this page are dropped.
  Object.keys(saved).forEach(function (k) {
    if (!cards[+k] || String(+k) !== k || !LABEL_NAME[saved[k]]) delete saved[k];
  });
  cards.forEach(show);
  countLabels();

  // The pairs in the order chosen: for labelling (the page's `order`: buckets in turn, each
  // one's pairs in a hashed order, so the first labelled are a uniform sample of each
  // bucket and the order gives no similarity away), or by similarity.
  function ordered() {
    if (orderBox.value === "similarity" || !data.order || data.order.length !== cards.length) return cards.slice();
    return data.order.map(function (i) { return cards[i]; });
  }
  var sequence = [];
  function arrange() {
    sequence = ordered();
    sequence.forEach(function (c) { list.appendChild(c.card); });
  }
  arrange();
  var current = null;
  function visible(c) { return c.card.style.display !== "none"; }
  function setCurrent(c) {
    if (current) current.card.classList.remove("current");
    current = c;
    if (c) c.card.classList.add("current");
  }
  function move(step, unlabelledOnly) {
    var at = current ? sequence.indexOf(current) : -1;
    for (var i = at + step; i >= 0 && i < sequence.length; i += step) {
      var c = sequence[i];
      if (visible(c) && (!unlabelledOnly || labelOf(c) === null)) {
        setCurrent(c);
        c.card.scrollIntoView({ block: "start" });
        return true;
      }
    }
    return false;
  }
  function firstCurrent() {
    setCurrent(null);
    if (!move(1, true)) move(1, false);
  }
  reveal.addEventListener("change", function () { list.classList.toggle("reveal", reveal.checked); });
  orderBox.addEventListener("change", function () { arrange(); });

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target && e.target.tagName;
    if (t === "INPUT" || t === "SELECT" || t === "TEXTAREA") return;
    var k = e.key;
    if (k === "s") { reveal.checked = !reveal.checked; list.classList.toggle("reveal", reveal.checked); }
    else if (k === "j") { if (!current) firstCurrent(); else move(1, false); }
    else if (k === "k") { move(-1, false); }
    else if (k === "n") { move(1, true); }
    else if (k >= "0" && k <= "4" && k.length === 1) {
      if (!current || !visible(current)) firstCurrent();
      if (!current) return;
      var c = current;
      setLabel(c, k === "0" ? null : LABELS[+k - 1][0]);
      if (k !== "0" && !move(1, true)) move(1, false);
    } else return;
    e.preventDefault();
  });

  // The labels file: one JSON line per labelled pair, in the page's pair order.
  function labelsFile() {
    var lines = [];
    cards.forEach(function (c) {
      var l = labelOf(c);
      if (l !== null) lines.push(JSON.stringify({ run_id: runId, id_a: c.a, id_b: c.b, label: l }) + "\n");
    });
    return lines.join("");
  }
  exportButton.addEventListener("click", function () {
    var url = URL.createObjectURL(new Blob([labelsFile()], { type: "application/x-ndjson" }));
    var link = el("a");
    link.href = url;
    link.download = "labels-" + runId + ".jsonl";
    document.body.appendChild(link);
    link.click();
    document.body.removeChild(link);
    setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
  });

  function filter() {
    var q = idBox.value.trim(), min = parseFloat(lo.value), max = parseFloat(hi.value), shown = 0;
    cards.forEach(function (c) {
      var ok = (!q || c.a.indexOf(q) >= 0 || c.b.indexOf(q) >= 0)
        && (isNaN(min) || c.score >= min) && (isNaN(max) || c.score <= max)
        && (!relBox.value || c.relation === relBox.value);
      c.card.style.display = ok ? "" : "none";
      if (ok) shown++;
    });
    count.textContent = shown + " of " + cards.length + " sampled pairs shown";
  }
  [idBox, lo, hi, relBox].forEach(function (i) { i.addEventListener("input", filter); });
  filter();
  firstCurrent();
  window.scrollTo(0, 0);

  // The clusters view.
  var clist = document.getElementById("clusters-list");
  if (data.clusters.length === 0) clist.appendChild(el("p", null, "No clusters of two or more records."));
  data.clusters.forEach(function (c, n) {
    var kept = docs[c.kept];
    var box = el("div", "cluster");
    box.setAttribute("data-kept", kept.id);
    var head = el("div", "cluster-head");
    head.appendChild(el("b", null, "#" + (n + 1) + ": " + c.size + " records"));
    head.appendChild(el("span", null, "kept " + kept.id));
    head.appendChild(el("span", null, "showing " + c.members.length + " of " + (c.size - 1) + " others"));
    box.appendChild(head);
    c.members.forEach(function (m) {
      var row = el("div", "member");
      row.appendChild(sides(docs[m], kept, "member", "kept"));
      box.appendChild(row);
    });
    clist.appendChild(box);
  });
})();
