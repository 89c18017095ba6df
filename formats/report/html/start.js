// heapd's HTML report script, part 5 of 5: printing, and the start of every part (see common.js).
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
