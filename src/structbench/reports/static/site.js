// structbench leaderboard: sort a table by a column when its header is clicked (tables marked `sortable`).
// Cells carry their number in `data-value`; rows in a `tbody.fixed` (set-apart rows) keep their place.
"use strict";
document.querySelectorAll("table.sortable").forEach((table) => {
  const head = table.tHead && table.tHead.rows[table.tHead.rows.length - 1];
  if (!head) return;
  Array.from(head.cells).forEach((th, column) => {
    th.classList.add("sortable");
    th.tabIndex = 0;
    th.setAttribute("aria-sort", "none");
    const sort = () => {
      const descending = th.getAttribute("aria-sort") !== "descending";
      Array.from(head.cells).forEach((other) => other.setAttribute("aria-sort", "none"));
      th.setAttribute("aria-sort", descending ? "descending" : "ascending");
      table.querySelectorAll("tbody:not(.fixed)").forEach((body) => {
        const rows = Array.from(body.rows);
        const key = (row) => {
          const cell = row.cells[column];
          const value = cell ? cell.dataset.value : undefined;
          return value === undefined || value === "" ? null : (isNaN(Number(value)) ? value : Number(value));
        };
        rows.sort((a, b) => {
          const x = key(a), y = key(b);
          if (x === null) return y === null ? 0 : 1;
          if (y === null) return -1;
          const order = x < y ? -1 : x > y ? 1 : 0;
          return descending ? -order : order;
        });
        rows.forEach((row) => body.appendChild(row));
      });
    };
    th.addEventListener("click", sort);
    th.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sort(); } });
  });
});
