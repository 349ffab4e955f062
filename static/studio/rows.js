// Typed row tables (templates/studio/_typed_rows.html, the version editor's variables and outputs): "Add a row"
// appends a copy of the table's row template in the page, numbered after the last row; the form's
// `<key>-rows` field counts the rows the server reads. A row's "Remove" takes it out of the page (the server
// skips the gap it leaves). No round trip, and what was typed stays.
(() => {
  const ready = (scope) => {
    scope.querySelectorAll("[data-rows]").forEach((box) => {
      if (box.dataset.rowsReady) return;
      box.dataset.rowsReady = "1";
      const button = box.querySelector("[data-add-row]");
      const template = box.querySelector("template[data-row-template]");
      const body = box.querySelector("[data-rows-body]");
      const count = box.querySelector("[data-rows-count]");
      if (!button || !template || !body || !count) return;
      body.querySelectorAll("[data-remove-row]").forEach((remove) => { remove.hidden = false; });
      body.addEventListener("click", (event) => {
        const remove = event.target.closest("[data-remove-row]");
        if (!remove) return;
        event.preventDefault();
        const row = remove.closest("tr");
        const next = row.nextElementSibling || row.previousElementSibling;
        row.remove();
        const focus = next && next.querySelector("input:not([type=hidden]), select, textarea");
        (focus || button).focus();
      });
      button.hidden = false;
      button.type = "button";
      button.addEventListener("click", (event) => {
        event.preventDefault();
        const index = Number(count.value) || 0;
        const html = template.innerHTML.replaceAll("__i__", String(index)).replaceAll("__n__", String(index + 1));
        body.insertAdjacentHTML("beforeend", html);
        count.value = String(index + 1);
        const added = body.lastElementChild;
        added.querySelectorAll("[data-remove-row]").forEach((remove) => { remove.hidden = false; });
        const first = added && added.querySelector("input:not([type=hidden]), select, textarea");
        if (first) first.focus();
      });
    });
  };
  document.addEventListener("DOMContentLoaded", () => ready(document));
})();
