// heapd's HTML report script: the dominator-tree sunburst, sortable and filterable tables, the history and
// growth charts. Inlined by formats/report/report_html.cpp; reads its data from the JSON block #heapd-data.
(function () {
  'use strict';

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

  // ---- Dominator tree sunburst ------------------------------------------------------------------------------

  const SIZE = 600, C = SIZE / 2, R0 = 66, RINGS = 6, RING = (C - 4 - R0) / RINGS;
  const MIN_ANGLE = 0.2 * Math.PI / 180;  // thinner slices are not drawn

  // "java.util.HashMap$Node[]" -> package "java.util", short name "HashMap$Node[]".
  function packageOf(cls) {
    const dot = cls.replace(/\[\]/g, '').lastIndexOf('.');
    return dot > 0 ? cls.slice(0, dot) : '(no package)';
  }
  function shortName(cls) {
    const dot = cls.replace(/\[\]/g, '').lastIndexOf('.');
    return dot > 0 ? cls.slice(dot + 1) : cls;
  }
  // A stable colour per package (FNV-1a hash); reds are left to suspects.
  const colours = new Map();
  function packageColour(pkg) {
    let c = colours.get(pkg);
    if (!c) {
      let h = 2166136261;
      for (let k = 0; k < pkg.length; k++) { h ^= pkg.charCodeAt(k); h = Math.imul(h, 16777619); }
      h >>>= 0;
      c = 'hsl(' + (30 + h % 300) + ',58%,' + (60 + (h >>> 9) % 14) + '%)';
      colours.set(pkg, c);
    }
    return c;
  }
  const AGGREGATE_COLOUR = '#c4c4c4', SUSPECT_COLOUR = '#e0403a';

  function point(r, a) { return (C + r * Math.sin(a)).toFixed(2) + ' ' + (C - r * Math.cos(a)).toFixed(2); }
  // The ring sector between radii r0 < r1 and angles a0 < a1 (clockwise from 12 o'clock); r0 = 0: the centre
  // disc. Each arc is drawn in two halves: no arc is over half a circle, and the ends of a whole ring's arc,
  // which would meet (and an arc whose ends meet is not drawn at all), are apart.
  function sector(r0, r1, a0, a1) {
    const m = (a0 + a1) / 2, arc = (r, a, sweep) => 'A' + r + ' ' + r + ' 0 0 ' + sweep + ' ' + point(r, a);
    const outer = 'M' + point(r1, a0) + arc(r1, m, 1) + arc(r1, a1, 1);
    return (r0 > 0 ? outer + 'L' + point(r0, a1) + arc(r0, m, 0) + arc(r0, a0, 0) : outer) + 'Z';
  }

  function setupTree(tree) {
    const view = document.getElementById('tree-view');
    const crumbs = document.getElementById('tree-crumbs');
    const raw = tree && Array.isArray(tree.nodes) ? tree.nodes : [];
    const n = raw.length;
    const nodes = new Array(n), kids = new Array(n), top = [];
    for (let i = 0; i < n; i++) {
      const r = raw[i] && typeof raw[i] === 'object' ? raw[i] : {};
      let p = Number.isInteger(r.parent) ? r.parent : -1;
      if (p < -1 || p >= i) p = -1;  // parents come first, so every chain of parents ends at the heap
      nodes[i] = {id: str(r.id), cls: str(r['class']), shallow: num(r.shallow), retained: Math.max(0, num(r.retained)),
                  parent: p, others: num(r.others), suspect: r.suspect === 1 || r.suspect === true};
      if (p < 0) top.push(i);
      else (kids[p] || (kids[p] = [])).push(i);
    }
    const byRetained = (a, b) => nodes[b].retained - nodes[a].retained;
    top.sort(byRetained);
    for (const list of kids) if (list) list.sort(byRetained);
    const children = i => (i < 0 ? top : kids[i] || []);
    let total = num(tree && tree.total);
    total = Math.max(total, top.reduce((s, i) => s + nodes[i].retained, 0));
    let focus = -1, drawn = false;

    const valid = i => Number.isInteger(i) && i >= -1 && i < n;
    const value = i => (i < 0 ? total : nodes[i].retained);
    const label = i => (i < 0 ? 'Heap' : nodes[i].others > 0 ? nodes[i].cls : shortName(nodes[i].cls));
    function zoom(i) {
      i = Number(i);
      if (!valid(i)) return false;
      focus = i;
      if (drawn) render();
      return true;
    }
    window.heapdZoom = zoom;
    window.heapdFocus = () => focus;
    if (!view) return;
    if (!n && !(total > 0)) {
      view.appendChild(html('p', 'empty', 'No dominator tree in this report.'));
      return;
    }

    const picture = svg('svg', {viewBox: '0 0 ' + SIZE + ' ' + SIZE, class: 'sunburst', role: 'img',
                                'aria-label': 'Dominator tree: retained bytes by object, the focus in the centre'});
    const side = html('div', 'tree-side');
    const tip = html('div', 'tip');
    tip.id = 'tree-tip';
    tip.hidden = true;
    tip.setAttribute('role', 'tooltip');
    for (const part of [picture, side, tip]) view.appendChild(part);
    drawn = true;

    function render() {
      tip.hidden = true;
      picture.textContent = '';
      side.textContent = '';
      const slices = svg('g', {class: 'slices'}, picture);
      const labels = svg('g', {class: 'labels'}, picture);
      const weight = new Map();  // package -> drawn area, for the legend
      let aggregates = false, suspects = false;

      // The centre: the focus (a node, or the heap itself, which is not a node).
      svg('path', focus < 0 ? {d: sector(0, R0, 0, TAU), class: 'centre', fill: '#ffffff'}
        : {d: sector(0, R0, 0, TAU), class: nodes[focus].suspect ? 'node centre suspect' : 'node centre',
           'data-index': focus, 'data-id': nodes[focus].id, fill: colourOf(focus)}, slices);
      const lines = [truncate(label(focus), 22), human(value(focus)), percent(value(focus), total) + ' of heap'];
      if (focus >= 0) lines.push('\u2191 click: up');
      lines.forEach((s, k) => svgText(labels, C, C + (k - (lines.length - 1) / 2) * 15 + 4, s,
                                      {class: k === 0 ? 'centre-label strong' : 'centre-label'}));

      // Breadth first from the focus, RINGS levels deep; each child gets its share of its parent's angle.
      const queue = [[focus, 0, 0, TAU]];
      for (let q = 0; q < queue.length; q++) {
        const [i, depth, a0, a1] = queue[q];
        if (depth >= RINGS) continue;
        const list = children(i);
        const sum = list.reduce((s, c) => s + nodes[c].retained, 0);
        const denominator = Math.max(value(i), sum);
        if (!(denominator > 0)) continue;
        const r0 = R0 + depth * RING, r1 = r0 + RING - 0.5;
        let a = a0;
        for (const c of list) {
          const span = (a1 - a0) * nodes[c].retained / denominator;
          if (span < MIN_ANGLE) break;  // sorted by size: the rest are thinner still
          const nd = nodes[c];
          const cls = nd.suspect ? 'node suspect' : span * r1 < 3 ? 'node thin' : 'node';  // thin: no outline
          svg('path', {d: sector(r0, r1, a, a + span), class: cls, fill: colourOf(c),
                       'data-index': c, 'data-id': nd.id}, slices);
          const pkg = packageOf(nd.cls);
          if (nd.others > 0) aggregates = true;
          else weight.set(pkg, (weight.get(pkg) || 0) + span * (r0 + r1));
          if (nd.suspect) suspects = true;
          sliceLabel(labels, c, (r0 + r1) / 2, a, span);
          queue.push([c, depth + 1, a, a + span]);
          a += span;
        }
      }

      const entries = Array.from(weight.keys()).sort((x, y) => weight.get(y) - weight.get(x)).slice(0, 8)
        .map(pkg => ({name: pkg, color: packageColour(pkg)}));
      if (aggregates) entries.push({name: 'small objects, grouped', color: AGGREGATE_COLOUR});
      if (suspects) entries.push({name: 'leak suspect', color: SUSPECT_COLOUR});
      side.appendChild(html('h3', '', 'Biggest packages in view'));
      side.appendChild(legend(entries));
      side.appendChild(html('p', 'hint', 'Area is retained size. Click a slice to zoom in, the centre to go up.'));
      renderCrumbs();
    }

    function colourOf(i) {
      const nd = nodes[i];
      return nd.suspect ? SUSPECT_COLOUR : nd.others > 0 ? AGGREGATE_COLOUR : packageColour(packageOf(nd.cls));
    }

    // The short class name along the middle of a slice wide enough to hold a few characters.
    function sliceLabel(parent, i, r, a, span) {
      const room = Math.floor((span * r - 6) / 6.2);
      if (room < 4) return;
      const mid = a + span / 2, deg = mid * 180 / Math.PI;
      const x = C + r * Math.sin(mid), y = C - r * Math.cos(mid);
      const flip = deg > 90 && deg < 270 ? 180 : 0;
      const t = svgText(parent, x, y + 3.5, truncate(label(i), room), {class: 'slice-label'});
      t.setAttribute('transform', 'rotate(' + (deg + flip).toFixed(2) + ' ' + x.toFixed(1) + ' ' + y.toFixed(1) + ')');
    }

    // "Heap › A › B": earlier parts are buttons. A long path keeps Heap, its first 2 and its last 7 parts.
    function renderCrumbs() {
      if (!crumbs) return;
      crumbs.textContent = '';
      const path = [];
      for (let i = focus; i >= 0; i = nodes[i].parent) path.push(i);
      path.push(-1);
      path.reverse();
      const keep = (k) => path.length <= 12 || k < 3 || k >= path.length - 7;
      path.forEach((i, k) => {
        if (!keep(k)) {
          if (keep(k - 1)) {
            crumbs.appendChild(html('span', 'sep', ' \u203a '));
            crumbs.appendChild(html('span', 'crumb elided', '\u2026 ' + grouped(path.length - 10) + ' more \u2026'));
          }
          return;
        }
        if (k > 0) crumbs.appendChild(html('span', 'sep', ' \u203a '));
        const last = k === path.length - 1;
        const part = html(last ? 'span' : 'button', last ? 'crumb current' : 'crumb', truncate(label(i), 40));
        if (!last) part.type = 'button';
        part.setAttribute('data-index', i);
        part.title = i < 0 ? 'the whole heap' : nodes[i].cls + (nodes[i].id ? ' ' + nodes[i].id : '');
        crumbs.appendChild(part);
      });
    }

    function showTip(i, event) {
      const nd = i >= 0 ? nodes[i] : null;
      const lines = !nd ? [] : [nd.others > 0 ? grouped(nd.others) + ' small objects, grouped' : 'id ' + nd.id,
                                'shallow ' + human(nd.shallow)];
      lines.push('retained ' + human(value(i)) + ' (' + percent(value(i), total) + ' of the heap)');
      tip.textContent = '';
      tip.appendChild(html('strong', '', nd ? nd.cls : 'Heap (all reachable objects)'));
      for (const line of lines) tip.appendChild(html('div', '', line));
      if (nd && nd.suspect) tip.appendChild(html('div', 'tip-suspect', 'leak suspect'));
      tip.hidden = false;
      const box = view.getBoundingClientRect();
      let x = event.clientX - box.left + 14, y = event.clientY - box.top + 14;
      if (x + tip.offsetWidth > box.width) x = Math.max(0, event.clientX - box.left - tip.offsetWidth - 10);
      tip.style.left = x + 'px';
      tip.style.top = y + 'px';
    }

    const target = event => (event.target.closest ? event.target.closest('path.node, path.centre') : null);
    picture.addEventListener('click', event => {
      const p = target(event);
      if (!p) return;
      if (p.classList.contains('centre')) { if (focus >= 0) zoom(nodes[focus].parent); }
      else zoom(Number(p.getAttribute('data-index')));
    });
    picture.addEventListener('mousemove', event => {
      const p = target(event);
      if (!p) { tip.hidden = true; return; }
      showTip(p.classList.contains('centre') ? focus : Number(p.getAttribute('data-index')), event);
    });
    picture.addEventListener('mouseleave', () => { tip.hidden = true; });
    if (crumbs) crumbs.addEventListener('click', event => {
      const b = event.target.closest ? event.target.closest('button.crumb') : null;
      if (b) zoom(Number(b.getAttribute('data-index')));
    });

    // "#node=0x7f001234" names the initial focus (and a later change of the hash moves it).
    function fromHash() {
      const m = /^#node=(.+)$/.exec(location.hash);
      if (!m) return false;
      let id = m[1];
      try { id = decodeURIComponent(id); } catch (e) { /* keep it as written */ }
      id = id.toLowerCase();
      for (let i = 0; i < n; i++) if (nodes[i].id && nodes[i].id.toLowerCase() === id) return zoom(i);
      return false;
    }
    window.addEventListener('hashchange', fromHash);
    if (!fromHash()) render();
  }

  // ---- Tables: sort by a column, filter by class ------------------------------------------------------------

  // The cell covering column col (cells may span columns).
  function cellAt(row, col) {
    let c = 0;
    for (const cell of row.cells) if ((c += cell.colSpan || 1) > col) return cell;
    return null;
  }
  function headerRow(table) {
    return table.tHead && table.tHead.rows.length ? table.tHead.rows[table.tHead.rows.length - 1] : table.rows[0];
  }
  function bodyRows(table, head) {
    const rows = [];
    for (const body of table.tBodies) for (const r of body.rows) if (r !== head) rows.push(r);
    return rows;
  }
  const collator = new Intl.Collator(undefined, {numeric: true, sensitivity: 'base'});
  function sortKey(cell) {
    const dv = cell ? cell.getAttribute('data-value') : null;
    return {n: dv !== null && dv.trim() !== '' ? Number(dv) : NaN, s: cell ? cell.textContent.trim() : ''};
  }
  // Numbers before text (such as "n/a") whichever the direction; sign is 1 ascending, -1 descending.
  function compareKeys(a, b, sign) {
    const an = !isNaN(a.n), bn = !isNaN(b.n);
    if (an !== bn) return an ? -1 : 1;
    return sign * (an ? a.n - b.n : collator.compare(a.s, b.s));
  }

  function setupTables() {
    for (const table of document.querySelectorAll('table.sortable')) {
      const head = headerRow(table);
      if (!head) continue;
      let col = 0;
      for (const th of head.cells) {
        const at = col;
        col += th.colSpan || 1;
        if (th.tagName !== 'TH') continue;
        th.classList.add('sort');
        th.tabIndex = 0;
        const go = () => sortBy(table, head, th, at);
        th.addEventListener('click', go);
        th.addEventListener('keydown', e => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); go(); } });
      }
    }
    for (const input of document.querySelectorAll('input.table-filter')) {
      const table = document.getElementById(input.getAttribute('data-table') || '');
      if (!table) continue;
      let count = input.nextElementSibling;
      if (!count || !count.classList.contains('filter-count')) {
        count = html('span', 'filter-count');
        input.parentNode.insertBefore(count, input.nextSibling);
      }
      count.setAttribute('aria-live', 'polite');
      const apply = () => filter(table, input.value, count);
      input.addEventListener('input', apply);
      apply();
    }
  }

  // First click: ascending; each further click on the same column toggles. aria-sort tells the state.
  function sortBy(table, head, th, col) {
    const dir = th.getAttribute('aria-sort') === 'ascending' ? 'descending' : 'ascending';
    for (const other of head.cells) {
      other.removeAttribute('aria-sort');
      other.classList.remove('sort-asc', 'sort-desc');
    }
    th.setAttribute('aria-sort', dir);
    th.classList.add(dir === 'ascending' ? 'sort-asc' : 'sort-desc');
    const sign = dir === 'ascending' ? 1 : -1;
    for (const body of table.tBodies) {
      const keyed = Array.from(body.rows).filter(r => r !== head).map((r, k) => ({r, k, key: sortKey(cellAt(r, col))}));
      keyed.sort((a, b) => compareKeys(a.key, b.key, sign) || a.k - b.k);
      for (const x of keyed) body.appendChild(x.r);
    }
  }

  function filter(table, query, count) {
    const q = query.trim().toLowerCase();
    const rows = bodyRows(table, headerRow(table));
    let shown = 0;
    for (const r of rows) {
      const cell = r.querySelector(':scope > .cls') || r.cells[0];
      const ok = !q || (!!cell && cell.textContent.toLowerCase().includes(q));
      r.hidden = !ok;
      if (ok) shown++;
    }
    count.textContent = shown + ' of ' + rows.length + ' rows';
  }

  // ---- History: heap and top suspects over time -------------------------------------------------------------

  // Axis ticks from 0: steps of 1, 2 or 5 times a power of ten of a 1024 unit.
  function ticks(max) {
    let unit = 1;
    while (max / unit >= 1024) unit *= 1024;
    const raw = max / unit / 4, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    const step = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p * unit;
    const out = [];
    for (let k = 0; k * step < max + step * 0.999 && k < 20; k++) out.push(k * step);
    return out;
  }
  function pad2(v) { return String(v).padStart(2, '0'); }
  function utc(ms, full) {
    const d = new Date(ms);
    const day = (full ? d.getUTCFullYear() + '-' : '') + pad2(d.getUTCMonth() + 1) + '-' + pad2(d.getUTCDate());
    return day + ' ' + pad2(d.getUTCHours()) + ':' + pad2(d.getUTCMinutes()) + (full ? ' UTC' : '');
  }

  function setupHistory(history) {
    const box = document.getElementById('history-chart');
    if (!box || !Array.isArray(history)) return;
    const pts = history.filter(p => p && typeof p === 'object');
    if (!pts.length) return;
    const times = pts.map(p => Number(p.time_ms));
    const byTime = times.every(t => isFinite(t) && t > 0) && Math.max.apply(null, times) > Math.min.apply(null, times);
    const has = (o, k) => o && typeof o === 'object' && Object.prototype.hasOwnProperty.call(o, k);
    const valueOf = x => (x === undefined || x === null || !isFinite(Number(x)) ? null : Number(x));

    // The heap, then the suspects' names by the most they ever retained (the 8 biggest).
    const series = [{name: 'heap (reachable)', color: '#333333', values: pts.map(p => valueOf(p.heap))}];
    const best = new Map();
    for (const p of pts) {
      if (p.suspects && typeof p.suspects === 'object') {
        for (const k of Object.keys(p.suspects)) best.set(k, Math.max(best.get(k) || 0, num(p.suspects[k])));
      }
    }
    Array.from(best.keys()).sort((a, b) => best.get(b) - best.get(a)).slice(0, PALETTE.length).forEach((name, k) => {
      const values = pts.map(p => (has(p.suspects, name) ? valueOf(p.suspects[name]) : null));
      series.push({name, color: PALETTE[k], values});
    });
    let max = 1;
    for (const s of series) for (const v of s.values) if (v !== null && v > max) max = v;

    const W = 800, H = 300, L = 74, R = 20, T = 12, B = 40, pw = W - L - R, ph = H - T - B;
    const tmin = Math.min.apply(null, times), tmax = Math.max.apply(null, times);
    const xOf = k => (byTime ? L + (times[k] - tmin) / (tmax - tmin) * pw
      : pts.length === 1 ? L + pw / 2 : L + k / (pts.length - 1) * pw);
    const ys = ticks(max), ytop = ys[ys.length - 1] || max;
    const yOf = v => T + ph - v / ytop * ph;
    const chart = svg('svg', {viewBox: '0 0 ' + W + ' ' + H, class: 'chart history', role: 'img',
                              'aria-label': 'Heap and leak suspects over time'});
    for (const v of ys) {
      svg('line', {x1: L, x2: W - R, y1: yOf(v), y2: yOf(v), class: 'grid'}, chart);
      svgText(chart, L - 6, yOf(v) + 4, shortHuman(v), {class: 'axis', 'text-anchor': 'end'});
    }
    let lastRight = -Infinity;
    pts.forEach((p, k) => {
      const x = xOf(k), text = byTime ? utc(times[k], false) : truncate(str(p.label), 14), w = text.length * 6.5;
      const anchor = x > W - R - w / 2 ? 'end' : x < L + w / 2 ? 'start' : 'middle';  // the ends stay inside
      const left = anchor === 'start' ? x : anchor === 'middle' ? x - w / 2 : x - w;
      if (left < lastRight + 10) return;  // it would overlap the previous label
      lastRight = left + w;
      svgText(chart, x, H - B + 18, text, {class: 'axis', 'text-anchor': anchor});
    });
    if (byTime) svgText(chart, 4, H - 6, 'times in UTC', {class: 'axis'});

    for (const s of series) {
      let d = '', pen = 'M';
      s.values.forEach((v, k) => {
        if (v === null) { pen = 'M'; return; }  // a gap: the name was not a top suspect then
        d += pen + xOf(k).toFixed(1) + ' ' + yOf(v).toFixed(1);
        pen = 'L';
      });
      if (d) svg('path', {d, class: 'line', stroke: s.color}, chart);
      s.values.forEach((v, k) => {
        if (v === null) return;
        const dot = svg('circle', {cx: xOf(k).toFixed(1), cy: yOf(v).toFixed(1), r: 3.5, class: 'pt', fill: s.color},
                        chart);
        const when = byTime ? utc(times[k], true) : '';
        svgTitle(dot, [str(pts[k].label), when, s.name + ': ' + human(v)].filter(Boolean).join('\n'));
      });
    }
    box.textContent = '';
    box.appendChild(chart);
    box.appendChild(legend(series.map(s => ({name: s.name, color: s.color}))));
  }

  // ---- Growth: one horizontal bar per class ----------------------------------------------------------------

  function setupGrowth(growth) {
    const box = document.getElementById('growth-chart');
    if (!box || !Array.isArray(growth)) return;
    const rows = growth.filter(r => r && typeof r === 'object')
      .map(r => ({cls: str(r['class']), delta: num(r.delta), before: r.before, after: r.after}));
    if (!rows.length) return;
    const maxPos = rows.reduce((m, r) => Math.max(m, r.delta), 0);
    const maxNeg = rows.reduce((m, r) => Math.max(m, -r.delta), 0);
    const W = 800, LW = 290, VW = 80, RH = 22;
    const x0 = LW + (maxNeg > 0 ? VW : 0), x1 = W - VW;
    const scale = (x1 - x0) / (maxPos + maxNeg || 1);
    const zero = x0 + maxNeg * scale;
    const H = rows.length * RH + 8;
    const chart = svg('svg', {viewBox: '0 0 ' + W + ' ' + H, class: 'chart growth', role: 'img',
                              'aria-label': 'Growth by class'});
    rows.forEach((r, k) => {
      const g = svg('g', {class: 'row'}, chart);
      const y = 4 + k * RH;
      const bits = [r.cls + ': ' + signedHuman(r.delta)];
      if (r.before !== undefined && r.after !== undefined) bits.push(human(r.before) + ' \u2192 ' + human(r.after));
      svgTitle(g, bits.join('\n'));
      svgText(g, LW - 8, y + RH / 2 + 4, truncateStart(r.cls, 42), {class: 'bar-label', 'text-anchor': 'end'});
      const w = Math.abs(r.delta) * scale, neg = r.delta < 0;
      if (w > 0) {
        svg('rect', {x: (neg ? zero - w : zero).toFixed(1), y: y + 3, width: Math.max(1, w).toFixed(1), height: RH - 6,
                     class: neg ? 'bar shrink' : 'bar grow'}, g);
      }
      svgText(g, neg ? zero - w - 4 : zero + w + 4, y + RH / 2 + 4, signedHuman(r.delta),
              {class: 'bar-value', 'text-anchor': neg ? 'end' : 'start'});
    });
    svg('line', {x1: zero, x2: zero, y1: 2, y2: H - 2, class: 'zero'}, chart);
    box.textContent = '';
    box.appendChild(chart);
  }

  // ---- Printing: open every <details> while printing, close again after --------------------------------------

  let opened = [];
  window.addEventListener('beforeprint', () => {
    opened = Array.from(document.querySelectorAll('details:not([open])'));
    for (const d of opened) d.open = true;
  });
  window.addEventListener('afterprint', () => {
    for (const d of opened) d.open = false;
    opened = [];
  });

  // ---- Start ------------------------------------------------------------------------------------------------

  function start() {
    const data = readData();
    // Each part on its own: one that fails leaves the others working.
    const parts = [() => setupTree(data.tree), setupTables, () => setupHistory(data.history),
                   () => setupGrowth(data.growth)];
    for (const part of parts) {
      try { part(); } catch (e) { setTimeout(() => { throw e; }); }  // reported, and the other parts still run
    }
  }
  // The page puts this script last, after the data block: start at once, so heapdZoom exists for later scripts.
  if (document.readyState !== 'loading' || document.getElementById('heapd-data')) start();
  else document.addEventListener('DOMContentLoaded', start);
})();
