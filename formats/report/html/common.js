// heapd's HTML report script, part 1 of 5: constants and small helpers (numbers, text, elements, legends).
// The parts are joined, in order, into one function by cmake/embed_text.cmake and inlined by
// formats/report/html_writer.cpp; the page's data is the JSON block #heapd-data.
const SVGNS = 'http://www.w3.org/2000/svg';
const TAU = 2 * Math.PI;
const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22'];
document.documentElement.classList.add('js');

// ---- Small helpers ----------------------------------------------------------------------------------------

function readData() {
  const script = document.getElementById('heapd-data');
  let d = null;
  try { d = script && JSON.parse(script.textContent); } catch (e) { /* the plain HTML stays as it is */ }
  return d && typeof d === 'object' ? d : {};
}
function num(x) { return isFinite(Number(x)) ? Number(x) : 0; }
function str(x) { return x === undefined || x === null ? '' : String(x); }

// Bytes in base-1024 units, as the text report prints them: "312 B", "1.50 KiB", "12.3 MiB", "456 GiB".
const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
function human(bytes) {
  let v = Math.abs(num(bytes));
  if (v < 1024) return Math.round(v) + ' B';
  let u = 0;
  while (Math.round(v) >= 1024 && u + 1 < UNITS.length) { v /= 1024; u++; }
  const places = Math.round(v * 100) / 100 < 10 ? 2 : Math.round(v * 10) / 10 < 100 ? 1 : 0;
  return v.toFixed(places) + ' ' + UNITS[u];
}
function signedHuman(d) { return (d > 0 ? '+' : d < 0 ? '-' : '') + human(d); }
// Axis labels: "1.50 MiB" stays, "2.00 MiB" becomes "2 MiB".
function shortHuman(bytes) { return human(bytes).replace(/\.0+ /, ' ').replace(/(\.\d*?)0+ /, '$1 '); }
function percent(part, whole) {
  if (!(whole > 0)) return '0%';
  const p = 100 * part / whole;
  return p > 0 && p < 0.1 ? '<0.1%' : p.toFixed(1) + '%';
}
function grouped(n) { return Math.round(n).toLocaleString('en-US'); }
function truncate(s, n) { return s.length > n ? s.slice(0, Math.max(1, n - 1)) + '\u2026' : s; }
// Keeps the end, where a class name is most telling: "…Segments.FinallyTheClass".
function truncateStart(s, n) { return s.length > n ? '\u2026' + s.slice(s.length - Math.max(1, n - 1)) : s; }

// An HTML element with a class and text (never markup).
function html(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
// An SVG element with attributes, appended to parent when given.
function svg(tag, attrs, parent) {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function svgText(parent, x, y, text, attrs) {
  const t = svg('text', Object.assign({x: x.toFixed(1), y: y.toFixed(1)}, attrs), parent);
  t.textContent = text;
  return t;
}
function svgTitle(parent, text) { svg('title', {}, parent).textContent = text; }

// A legend: <ul class="legend"><li><span class="swatch"></span>name</li>...</ul>.
function legend(entries) {
  const ul = html('ul', 'legend');
  for (const e of entries) {
    const li = html('li');
    const sw = html('span', 'swatch');
    sw.style.backgroundColor = e.color;
    li.appendChild(sw);
    li.appendChild(document.createTextNode(e.name));
    ul.appendChild(li);
  }
  return ul;
}
