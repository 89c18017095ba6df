// heapd's HTML report script, part 3 of 5: tables sorted by any column and filtered by class (see common.js).
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
