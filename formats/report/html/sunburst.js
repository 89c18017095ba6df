// heapd's HTML report script, part 2 of 5: the dominator tree as a zoomable sunburst (see common.js).
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
