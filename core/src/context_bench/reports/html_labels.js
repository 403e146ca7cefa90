// Labelling rows by hand: each row's detail gets "mark correct" and "mark incorrect", and "export
// labels" saves the marks as JSONL (labels.jsonl), one {"id", "system", "dataset", "label"} a line:
// the labels file a judge is checked against (docs/judge.md). A marked row's line in the table says
// its mark (data-label), so a person sees what is left to label. The marks live in the page and,
// where the browser allows it, in localStorage under the run's key (#cb-detail's data-run), so a
// closed page keeps them. No server is needed, and every text is set with textContent.
(function () {
  var box = document.getElementById("cb-detail");
  if (!box) return;
  var LABELS = ["correct", "incorrect"];
  var marks = new Map();  // key of the row -> its line of the export
  var saved = box.dataset.run ? "cbench-labels:" + box.dataset.run : null;
  function key(mark) { return JSON.stringify([mark.system, mark.dataset, mark.id]); }
  function valid(mark) {
    return mark !== null && typeof mark === "object" && typeof mark.id === "string" &&
      typeof mark.system === "string" && typeof mark.dataset === "string" && LABELS.indexOf(mark.label) >= 0;
  }
  function store() {
    if (!saved) return;
    try { localStorage.setItem(saved, JSON.stringify(Array.from(marks.values()))); } catch (error) { /* marks stay in the page */ }
  }
  if (saved) {
    try {
      var kept = JSON.parse(localStorage.getItem(saved) || "[]");
      if (Array.isArray(kept)) kept.filter(valid).forEach(function (mark) { marks.set(key(mark), mark); });
    } catch (error) { /* no storage here, or not ours: start empty */ }
  }

  // the table's rows: the system, data set and example cells name the row a mark is for
  var table = document.getElementById("cb-body");
  function decorate() {
    Array.prototype.forEach.call(table.children, function (tr) {
      var cells = tr.children;
      var mark = marks.get(key({ system: cells[1].textContent, dataset: cells[2].textContent, id: cells[3].textContent }));
      if (mark) tr.dataset.label = mark.label;
      else delete tr.dataset.label;
    });
  }
  if (table) {
    table.addEventListener("cb-drawn", decorate);
    decorate();  // the first page was drawn before this script ran
  }

  function el(tag, text, id) {
    var node = document.createElement(tag);
    if (text) node.textContent = text;
    if (id) node.id = id;
    return node;
  }

  function exportLabels() {
    var text = Array.from(marks.values()).map(function (mark) {
      return JSON.stringify({ id: mark.id, system: mark.system, dataset: mark.dataset, label: mark.label }) + "\n";
    }).join("");
    var url = URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" }));
    var link = document.createElement("a");
    link.href = url;
    link.download = "labels.jsonl";
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
  }

  // the row the detail shows: its name, and the buttons that mark it
  box.addEventListener("cb-row", function (event) {
    var row = { id: String(event.detail.id), system: event.detail.system, dataset: event.detail.dataset };
    var bar = el("div", null, "cb-labels");
    bar.className = "labels";
    var state = el("span", null, "cb-marked");
    var count = el("span", null, "cb-count");
    var exporter = el("button", "export labels", "cb-export");
    exporter.className = "link";
    exporter.addEventListener("click", exportLabels);
    function show() {
      if (table) decorate();
      var mark = marks.get(key(row));
      state.textContent = mark ? "marked " + mark.label : "not marked";
      state.className = mark ? mark.label : "";
      count.textContent = marks.size + (marks.size === 1 ? " row" : " rows") + " marked";
      exporter.disabled = marks.size === 0;
    }
    bar.appendChild(el("span", "label this row: "));
    LABELS.forEach(function (label) {
      var button = el("button", "mark " + label, "cb-mark-" + label);
      button.addEventListener("click", function () {
        marks.set(key(row), { id: row.id, system: row.system, dataset: row.dataset, label: label });
        store();
        show();
      });
      bar.appendChild(button);
    });
    var clear = el("button", "clear", "cb-mark-clear");
    clear.addEventListener("click", function () { marks.delete(key(row)); store(); show(); });
    bar.appendChild(clear);
    [state, el("span", " · "), count, el("span", " · "), exporter].forEach(function (node) { bar.appendChild(node); });
    show();
    box.appendChild(bar);
  });
})();
