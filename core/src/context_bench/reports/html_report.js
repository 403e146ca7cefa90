// The HTML report's row table and loss audit: reads the rows from the JSON in #cb-data (or, for a
// big run, from the rows file beside the page, named in it), pages, sorts and filters them, and
// shows a row's detail on click.  Every text is set with textContent (never innerHTML), so no row
// can add markup or script to the page.
"use strict";
(function () {
  var data = JSON.parse(document.getElementById("cb-data").textContent);
  var paged = typeof data.rows_file === "string";
  var rows = paged ? [] : data.rows, fields = data.fields, figures = data.figures;
  var source = null;  // paged: the rows file, as a Blob a row's line is sliced from
  // the rows the loss audit shows, found as the rows are read
  var wanted = new Set(), byKey = new Map();
  function key(system, dataset, id) { return system + "\u0000" + dataset + "\u0000" + id; }
  (data.audit || []).forEach(function (entry) {
    var ds = data.datasets.indexOf(entry.dataset);
    [entry.baseline, entry.system].forEach(function (system) {
      var s = data.systems.indexOf(system);
      entry.lost.concat(entry.gained).forEach(function (id) { wanted.add(key(s, ds, id)); });
    });
  });
  function keep(r) {
    var k = key(r[1], r[2], r[3]);
    if (wanted.has(k)) byKey.set(k, r);
  }
  rows.forEach(keep);
  var state = { page: 0, sort: null, desc: false, shown: rows };

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function score(v) { return v === null || v === undefined ? "-" : v.toFixed(3); }
  function num(v) {
    if (v === null || v === undefined) return "-";
    if (typeof v === "string") return v;  // a row's loss cause
    return Number.isInteger(v) ? String(v) : Math.abs(v) >= 1000 ? v.toFixed(1) : v.toPrecision(4);
  }
  function preview(text) {
    if (text === null) return "";
    var line = text.split(/\s+/).join(" ");
    return line.length > 120 ? line.slice(0, 120) + "…" : line;
  }

  // -- the table ---------------------------------------------------------------------------------
  var columns = [
    { name: "#", numeric: true, get: function (r) { return r[0]; }, show: String },
    { name: "system", get: function (r) { return data.systems[r[1]]; } },
    { name: "dataset", get: function (r) { return data.datasets[r[2]]; } },
    { name: "example", get: function (r) { return r[3]; } },
  ];
  // a row encoded before a score field first appeared lacks it
  function scoreOf(r, i) { return i < r[4].length ? r[4][i] : null; }
  fields.forEach(function (f, i) {
    columns.push({ name: f, numeric: true, get: function (r) { return scoreOf(r, i); }, show: score });
  });
  figures.forEach(function (f) {
    columns.push({ name: f[0], numeric: true, get: function (r) { return r[5][f[1]]; }, show: num });
  });
  columns.push({ name: "errors", get: function (r) { return r[6].join("; "); }, cls: "error" });
  columns.push({ name: "failures", get: function (r) { return r[7].join("; "); }, cls: "error" });
  columns.push({ name: "response", get: function (r) { return r[8]; }, show: preview });

  var root = document.getElementById("cb-rows");
  var controls = el("div", null, "controls");
  function select(id, label, options) {
    var wrap = el("label", label + " ");
    var box = el("select");
    box.id = id;
    options.forEach(function (o) { var opt = el("option", o[1]); opt.value = o[0]; box.appendChild(opt); });
    box.addEventListener("change", refilter);
    wrap.appendChild(box);
    controls.appendChild(wrap);
    return box;
  }
  function input(id, label, type) {
    var wrap = el("label", label + " ");
    var box = el("input");
    box.id = id;
    box.type = type;
    if (type === "number") box.step = "any";
    box.addEventListener("input", refilter);
    wrap.appendChild(box);
    controls.appendChild(wrap);
    return box;
  }
  var any = [["", "all"]];
  var bySystem = select("cb-system", "system", any.concat(data.systems.map(function (s, i) { return [String(i), s]; })));
  var byDataset = select("cb-dataset", "data set", any.concat(data.datasets.map(function (d, i) { return [String(i), d]; })));
  var byField = select("cb-field", "score", [["", "-"]].concat(fields.map(function (f, i) { return [String(i), f]; })));
  var low = input("cb-min", "from", "number");
  var high = input("cb-max", "to", "number");
  var byErrors = select("cb-errors", "errors", [["", "all"], ["1", "with errors"], ["0", "without"]]);
  var byFailures = select("cb-failures", "failures", [["", "all"], ["1", "with failures"], ["0", "without"]]);
  var search = input("cb-search", "text", "search");
  root.appendChild(controls);

  var pager = el("div", null, "pager");
  var prev = el("button", "‹ previous");
  prev.id = "cb-prev";
  var next = el("button", "next ›");
  next.id = "cb-next";
  var info = el("span");
  info.id = "cb-info";
  pager.appendChild(prev);
  pager.appendChild(info);
  pager.appendChild(next);
  root.appendChild(pager);
  prev.addEventListener("click", function () { state.page -= 1; draw(); });
  next.addEventListener("click", function () { state.page += 1; draw(); });

  var scroll = el("div", null, "scroll");
  var table = el("table");
  table.id = "cb-table";
  var head = el("tr");
  columns.forEach(function (c, i) {
    var th = el("th", c.name, c.numeric ? "num sortable" : "sortable");
    th.dataset.column = String(i);
    th.addEventListener("click", function () { sortBy(i); });
    head.appendChild(th);
  });
  var thead = el("thead");
  thead.appendChild(head);
  table.appendChild(thead);
  var body = el("tbody");
  body.id = "cb-body";
  table.appendChild(body);
  scroll.appendChild(table);
  root.appendChild(scroll);
  var detailBox = el("div", null, "detail");
  detailBox.id = "cb-detail";
  if (typeof data.run === "string") detailBox.dataset.run = data.run;  // whose marks (html_labels.js)
  root.appendChild(detailBox);
  // the plain first page stays until the table can show the rows
  var fallback = document.getElementById("cb-static");
  if (fallback && !paged) fallback.remove();

  function refilter() {
    var system = bySystem.value, dataset = byDataset.value, field = byField.value;
    var from = low.value === "" ? null : Number(low.value), to = high.value === "" ? null : Number(high.value);
    var errors = byErrors.value, failures = byFailures.value, text = search.value.toLowerCase();
    state.shown = rows.filter(function (r) {
      if (system !== "" && r[1] !== Number(system)) return false;
      if (dataset !== "" && r[2] !== Number(dataset)) return false;
      if (field !== "") {
        var v = scoreOf(r, Number(field));
        if (v === null) return false;
        if (from !== null && v < from) return false;
        if (to !== null && v > to) return false;
      }
      if (errors !== "" && (r[6].length > 0) !== (errors === "1")) return false;
      if (failures !== "" && (r[7].length > 0) !== (failures === "1")) return false;
      if (text && r[3].toLowerCase().indexOf(text) < 0 && (r[8] || "").toLowerCase().indexOf(text) < 0) return false;
      return true;
    });
    if (state.sort !== null) order();
    state.page = 0;
    draw();
  }

  function sortBy(i) {
    state.desc = state.sort === i ? !state.desc : false;
    state.sort = i;
    state.page = 0;
    order();
    draw();
  }

  function order() {
    var get = columns[state.sort].get, sign = state.desc ? -1 : 1;
    state.shown = state.shown.slice().sort(function (a, b) {
      var x = get(a), y = get(b);
      if (x === y) return a[0] - b[0];
      if (x === null || x === undefined || x === "") return 1;  // blanks last either way
      if (y === null || y === undefined || y === "") return -1;
      return (x < y ? -1 : 1) * sign;
    });
  }

  function draw() {
    var size = data.page, pages = Math.max(1, Math.ceil(state.shown.length / size));
    state.page = Math.min(Math.max(state.page, 0), pages - 1);
    var start = state.page * size, slice = state.shown.slice(start, start + size);
    body.textContent = "";
    slice.forEach(function (r) {
      var tr = el("tr");
      tr.dataset.index = String(r[0]);
      columns.forEach(function (c) {
        var v = c.get(r);
        var cls = c.numeric ? "num" : v ? c.cls : "";
        tr.appendChild(el("td", c.show ? c.show(v) : v, cls));
      });
      tr.addEventListener("click", function () { showRow(r); });
      body.appendChild(tr);
    });
    body.dispatchEvent(new CustomEvent("cb-drawn"));  // for what marks the rows shown (html_labels.js)
    info.textContent = paged && !source ? " the rows are not read yet " : state.shown.length
      ? " rows " + (start + 1) + "–" + (start + slice.length) + " of " + state.shown.length +
        (state.shown.length < rows.length ? " (filtered from " + rows.length + ")" : "") + " "
      : " no rows match ";
    prev.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
    Array.prototype.forEach.call(head.children, function (th, i) {
      th.classList.toggle("asc", state.sort === i && !state.desc);
      th.classList.toggle("desc", state.sort === i && state.desc);
    });
  }

  // -- a row's detail ------------------------------------------------------------------------------
  function rowParts(r, target) {
    var dl = el("dl");
    function item(name, value) {
      if (value === null || value === undefined || value === "") return;
      dl.appendChild(el("dt", name));
      var dd = el("dd");
      dd.appendChild(el("pre", value));
      dl.appendChild(dd);
    }
    item("system", data.systems[r[1]] + " on " + data.datasets[r[2]] + " (#" + r[0] + ")");
    item("scores", fields.map(function (f, i) { var v = scoreOf(r, i); return v === null ? null : f + " " + score(v); })
      .filter(Boolean).join("\n"));
    item("figures", figures.map(function (f) { var v = r[5][f[1]]; return v === null ? null : f[0] + " " + num(v); })
      .filter(Boolean).join("\n"));
    item("errors", r[6].join("\n"));
    item("failures", r[7].join("\n"));
    item("prompt sent", r[9]);
    item("response", r[8]);
    item("reference", r[10]);
    item("judge's explanation", r[11]);
    item("metadata", r[12]);
    target.appendChild(dl);
  }

  // paged: the table holds a row's cells and where its line lies in the rows file; the whole row
  // is read from there when it is shown
  function full(r) {
    if (!paged) return Promise.resolve(r);
    if (!source) return Promise.resolve(null);  // still being read, or the read failed
    return source.slice(r[9], r[9] + r[10]).text().then(JSON.parse);
  }

  function showRow(r) {
    full(r).then(function (whole) {
      if (!whole) return;
      detailBox.textContent = "";
      detailBox.appendChild(el("h3", "Row " + whole[3]));
      // the row shown, for what adds to its detail (html_labels.js: the buttons that label it)
      detailBox.dispatchEvent(new CustomEvent("cb-row", {
        detail: { system: data.systems[whole[1]], dataset: data.datasets[whole[2]], id: whole[3] },
      }));
      rowParts(whole, detailBox);
      detailBox.dataset.row = String(whole[0]);
      detailBox.scrollIntoView({ block: "nearest" });
    });
  }

  // -- the loss audit ------------------------------------------------------------------------------
  var audit = document.getElementById("cb-audit");
  (data.audit || []).forEach(function (entry, n) {
    var box = el("details");
    box.id = "cb-audit-" + n;
    box.appendChild(el("summary", entry.system + " against " + entry.baseline + " on " + entry.dataset + ", " +
      entry.field + ": " + entry.lost.length + " lost, " + entry.gained.length + " gained"));
    var filled = false;
    box.addEventListener("toggle", function () {
      if (filled || !box.open) return;
      filled = true;
      [["lost (passed on " + entry.baseline + ", fail on " + entry.system + ")", entry.lost],
       ["gained (failed on " + entry.baseline + ", pass on " + entry.system + ")", entry.gained]].forEach(function (part) {
        if (!part[1].length) return;
        box.appendChild(el("h4", part[0]));
        var list = el("div", null, "ids");
        var pair = el("div", null, "pair");
        part[1].forEach(function (id) {
          var button = el("button", id, "id");
          button.addEventListener("click", function () { showPair(entry, id, pair); });
          list.appendChild(button);
        });
        box.appendChild(list);
        box.appendChild(pair);
      });
    });
    if (audit) audit.appendChild(box);
  });

  function showPair(entry, id, target) {
    var ds = data.datasets.indexOf(entry.dataset);
    var sides = [entry.baseline, entry.system].map(function (system) {
      var r = byKey.get(key(data.systems.indexOf(system), ds, id));
      return r ? full(r) : Promise.resolve(null);
    });
    Promise.all(sides).then(function (found) {
      target.textContent = "";
      [entry.baseline, entry.system].forEach(function (system, i) {
        var side = el("div", null, "side");
        side.appendChild(el("h4", system));
        if (found[i]) rowParts(found[i], side);
        else side.appendChild(el("p", paged && !source ? "the rows are not loaded yet" : "row " + id + " is not in this report"));
        target.appendChild(side);
      });
    });
  }

  // -- the rows file of a big run ------------------------------------------------------------------
  // Read in chunks of bytes, split at newlines (a row's JSON holds none), each row kept as its cells
  // and its line's place, so the page holds no row's texts beyond the response's first characters.
  var CHUNK = 8 << 20;
  var loading = el("div", null, "loading");
  loading.id = "cb-load";

  var reading = 0;  // the read in progress: a file picked while another is read supersedes it

  function index(blob) {
    var decoder = new TextDecoder(), found = [], pos = 0, carry = new Uint8Array(0), mine = ++reading;
    source = null;
    byKey = new Map();
    loading.textContent = "Reading the rows from " + data.rows_file + "…";
    function add(bytes, at) {
      var text = decoder.decode(bytes);
      if (!text.trim()) return;
      var r = JSON.parse(text);
      if (!Array.isArray(r) || r.length < 9 || typeof r[0] !== "number" || !Array.isArray(r[4]) ||
          !Array.isArray(r[5]) || !Array.isArray(r[6]) || !Array.isArray(r[7])) {
        throw new Error("a line is not one of this report's rows");
      }
      var cells = r.slice(0, 8);
      cells.push(preview(r[8]), at, bytes.length);
      keep(cells);
      found.push(cells);
    }
    function step() {
      return blob.slice(pos, pos + CHUNK).arrayBuffer().then(function (buffer) {
        if (mine !== reading) return null;
        var fresh = new Uint8Array(buffer), bytes = fresh, base = pos - carry.length, start = 0, end;
        if (carry.length) {
          bytes = new Uint8Array(carry.length + fresh.length);
          bytes.set(carry);
          bytes.set(fresh, carry.length);
        }
        while ((end = bytes.indexOf(10, start)) >= 0) {
          if (end > start) add(bytes.subarray(start, end), base + start);
          start = end + 1;
        }
        carry = bytes.slice(start);
        pos += fresh.length;
        loading.textContent = "Reading the rows from " + data.rows_file + ": " + found.length + " of " + data.count + "…";
        if (pos < blob.size) return step();
        if (carry.length) add(carry, base + start);
        return found;
      });
    }
    return step().then(function (all) {
      if (all === null || mine !== reading) return;
      source = blob;
      rows = all;
      if (fallback) fallback.remove();
      if (all.length === data.count) loading.textContent = "";
      else pick("The file holds " + all.length + " rows; this report was written with " + data.count + ": is it this report's?");
      refilter();
      document.body.dataset.rows = "loaded";
    }).catch(function (error) {
      if (mine === reading) failed(error);
    });
  }

  function pick(why) {
    loading.textContent = why + " Choose " + data.rows_file + " (beside this page) to see its " + data.count + " rows: ";
    var chooser = el("input");
    chooser.type = "file";
    chooser.id = "cb-file";
    chooser.accept = ".jsonl";
    chooser.addEventListener("change", function () {
      if (chooser.files.length) index(chooser.files[0]);
    });
    loading.appendChild(chooser);
  }

  function failed(error) {
    reading += 1;
    source = null;
    rows = [];
    byKey = new Map();
    refilter();
    pick("Could not read the rows (" + error.message + ").");
    document.body.dataset.rows = "failed";
  }

  draw();
  if (paged) {
    root.insertBefore(loading, controls);
    if (location.protocol === "http:" || location.protocol === "https:") {
      fetch(encodeURIComponent(data.rows_file)).then(function (reply) {
        if (!reply.ok) throw new Error(data.rows_file + ": HTTP " + reply.status);
        return reply.blob();
      }).then(index).catch(failed);
    } else {
      pick("A page opened from disk may not read other files by itself.");
    }
  }
  document.body.dataset.ready = "1";
})();
