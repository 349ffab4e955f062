// Typed row tables (templates/studio/_typed_rows.html, the version editor's variables and outputs): "Add a row"
// appends a copy of the table's row template in the page, numbered after the last row; the form's
// `<key>-rows` field counts the rows the server reads. No round trip, and what was typed stays.
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
      button.hidden = false;
      button.type = "button";
      button.addEventListener("click", (event) => {
        event.preventDefault();
        const index = Number(count.value) || 0;
        const html = template.innerHTML.replaceAll("__i__", String(index)).replaceAll("__n__", String(index + 1));
        body.insertAdjacentHTML("beforeend", html);
        count.value = String(index + 1);
        const added = body.lastElementChild;
        const first = added && added.querySelector("input:not([type=hidden]), select, textarea");
        if (first) first.focus();
      });
    });
  };
  document.addEventListener("DOMContentLoaded", () => ready(document));
})();
