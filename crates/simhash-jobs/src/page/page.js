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
  // Minhash: the relation of each pair, and a filter by it.
  var relBox = el("select"); relBox.id = "filter-relation";
  ["", "same", "template"].forEach(function (r) {
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

  var cards = data.pairs.map(function (p) {
    var a = docs[p[0]], b = docs[p[1]];
    var card = el("div", "pair");
    card.setAttribute("data-removed", a.id);
    card.setAttribute("data-kept", b.id);
    card.setAttribute("data-score", p[2]);
    if (p[3]) card.setAttribute("data-relation", p[3]);
    var head = el("div", "pair-head");
    head.appendChild(el("b", null, labels[0] + " " + a.id));
    head.appendChild(el("span", null, (isDedup ? "duplicate of " : "matches ") + b.id));
    head.appendChild(el("span", null, scoreText(p[2])));
    if (p[3]) head.appendChild(el("span", "relation", p[3]));
    card.appendChild(head);
    card.appendChild(sides(a, b, labels[0], labels[1]));
    list.appendChild(card);
    return { card: card, a: a.id, b: b.id, score: parseFloat(p[2]), relation: p[3] || "" };
  });
  if (cards.length === 0) list.appendChild(el("p", null, "No pairs."));

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
