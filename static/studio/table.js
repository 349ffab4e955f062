// The table component (studio/tables.py): the column chooser (kept in this browser, per table), row selection
// that survives the rows' live refresh, bulk actions that name what they act on, and the CSV export of the
// columns shown.
(function () {
  "use strict";
  const selected = {};  // table name -> Set of row ids

  function key(name) { return `studio-columns:${name}`; }
  function shownColumns(name) {
    try { const saved = JSON.parse(localStorage.getItem(key(name)) || "null"); if (Array.isArray(saved)) return saved; }
    catch (e) { /* private mode or a bad value: the defaults */ }
    const chooser = document.querySelector(`[data-col-chooser="${name}"]`);
    return chooser ? chooser.dataset.defaultColumns.split(",").filter(Boolean) : [];
  }
  function applyColumns(name) {
    const shown = new Set(shownColumns(name));
    document.querySelectorAll(`[data-col-chooser="${name}"] [data-col-toggle]`).forEach((box) => {
      box.checked = shown.has(box.dataset.colToggle);
    });
    document.querySelectorAll(`table[data-table="${name}"] [data-col]`).forEach((cell) => {
      cell.classList.toggle("col-hidden", !shown.has(cell.dataset.col));
    });
  }
  function tableOf(element) {
    const holder = element.closest("[data-col-chooser], [data-table-tools], table[data-table]");
    return holder && (holder.dataset.colChooser || holder.dataset.tableTools || holder.dataset.table);
  }

  function rowBoxes(name) { return [...document.querySelectorAll(`table[data-table="${name}"] [data-select-row]`)]; }
  function syncSelection(name) {
    const set = selected[name] || (selected[name] = new Set());
    const boxes = rowBoxes(name);
    const present = new Set(boxes.map((box) => box.value));
    [...set].forEach((id) => { if (!present.has(id)) set.delete(id); });  // gone from this page
    boxes.forEach((box) => { box.checked = set.has(box.value); });
    const all = document.querySelector(`table[data-table="${name}"] [data-select-all]`);
    if (all) {
      all.checked = boxes.length > 0 && set.size === boxes.length;
      all.indeterminate = set.size > 0 && set.size < boxes.length;
    }
    const form = document.getElementById(`bulk-${name}`);
    if (!form) return;
    form.querySelector("[data-selected-count]").textContent = set.size ? `${set.size} selected` : "None selected";
    form.querySelectorAll("[data-bulk-action]").forEach((button) => { button.disabled = set.size === 0; });
  }

  document.addEventListener("change", (event) => {
    const target = event.target;
    if (target.matches("[data-col-toggle]")) {
      const name = tableOf(target);
      const shown = [...document.querySelectorAll(`[data-col-chooser="${name}"] [data-col-toggle]`)]
        .filter((box) => box.checked).map((box) => box.dataset.colToggle);
      try { localStorage.setItem(key(name), JSON.stringify(shown)); } catch (e) { /* not kept */ }
      applyColumns(name);
    } else if (target.matches("[data-select-row]")) {
      const name = tableOf(target);
      const set = selected[name] || (selected[name] = new Set());
      if (target.checked) set.add(target.value); else set.delete(target.value);
      syncSelection(name);
    } else if (target.matches("[data-select-all]")) {
      const name = tableOf(target);
      const set = selected[name] || (selected[name] = new Set());
      rowBoxes(name).forEach((box) => { if (target.checked) set.add(box.value); else set.delete(box.value); });
      syncSelection(name);
    }
  });

  document.addEventListener("click", (event) => {
    const reset = event.target.closest("[data-col-reset]");
    if (reset) {
      const name = tableOf(reset);
      try { localStorage.removeItem(key(name)); } catch (e) { /* nothing kept */ }
      applyColumns(name);
      return;
    }
    const exportLink = event.target.closest("[data-export]");
    if (exportLink) {
      const name = tableOf(exportLink);
      const url = new URL(exportLink.href, window.location.href);
      url.searchParams.set("columns", shownColumns(name).join(","));
      exportLink.href = url.pathname + url.search;
      return;
    }
    // A bulk button: the confirmation (static/studio/ui.js) names the action and the rows it acts on.
    const button = event.target.closest("[data-bulk-action]");
    if (button) {
      const form = button.form;
      const name = form.id.replace(/^bulk-/, "");
      const names = rowBoxes(name).filter((box) => box.checked)
        .map((box) => (box.getAttribute("aria-label") || "").replace(/^Select /, "").trim());  // the row's label
      const noun = names.length === 1 ? (form.dataset.nounOne || form.dataset.noun) : form.dataset.noun;
      form.dataset.confirmTitle = `${button.dataset.bulkAction} ${names.length} ${noun}?`;
      form.dataset.confirm = `${names.slice(0, 10).join(", ")}${names.length > 10 ? ` and ${names.length - 10} more` : ""}.`;
      form.dataset.confirmButton = `${button.dataset.bulkAction} ${names.length} ${noun}`;
    }
  }, true);

  function setUp(scope) {
    new Set([...scope.querySelectorAll("table[data-table], [data-col-chooser]")].map(tableOf)).forEach((name) => {
      applyColumns(name);
      syncSelection(name);
    });
  }
  // The chooser's checkboxes enter the page when it first opens ("toggle" does not bubble: captured).
  document.addEventListener("toggle", (event) => {
    const chooser = event.target;
    if (!chooser.matches || !chooser.matches("[data-col-chooser]") || !chooser.open) return;
    const menu = chooser.querySelector("[data-col-menu]");
    if (!menu.childElementCount) menu.append(chooser.querySelector("template[data-col-options]").content.cloneNode(true));
    applyColumns(chooser.dataset.colChooser);
  }, true);
  document.addEventListener("htmx:afterSwap", (event) => setUp(event.detail.elt));
  document.addEventListener("DOMContentLoaded", () => setUp(document));
})();
