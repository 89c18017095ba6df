// heapd's HTML report script, part 4 of 5: the history and growth charts (see common.js).
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
