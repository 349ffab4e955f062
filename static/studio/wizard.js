// Service profile wizard: add and remove key/value rows; show "allowed values" only for restricted inputs and
// the project list only for "Selected projects". Without it every control is shown and the server decides.
(function () {
  "use strict";

  function renumber(rows) {
    rows.querySelectorAll("[data-row]").forEach((row, index) => {
      row.querySelectorAll("[aria-label]").forEach((el) => {
        el.setAttribute("aria-label", el.getAttribute("aria-label").replace(/\d+$/, String(index + 1)));
      });
    });
  }

  function setUpKeyValues(fieldset) {
    const rows = fieldset.querySelector("[data-rows]");
    rows.addEventListener("click", (event) => {
      const remove = event.target.closest("[data-remove]");
      if (!remove) return;
      const row = remove.closest("[data-row]");
      if (rows.querySelectorAll("[data-row]").length > 1) {
        row.remove();
      } else {
        row.querySelectorAll("input").forEach((input) => { input.value = ""; });
      }
      renumber(rows);
      (rows.querySelector("[data-row]:last-child input") || fieldset.querySelector("[data-add]")).focus();
    });
    fieldset.querySelector("[data-add]").addEventListener("click", () => {
      const last = rows.querySelector("[data-row]:last-child");
      const row = last.cloneNode(true);
      row.querySelectorAll("input").forEach((input) => { input.value = ""; });
      row.querySelectorAll(".error").forEach((error) => error.remove());
      rows.append(row);
      renumber(rows);
      row.querySelector("input").focus();
    });
  }

  function toggle(select, target, shown) {
    const update = () => { target.hidden = !shown(select.value); };
    select.addEventListener("change", update);
    update();
  }

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll("[data-kv]").forEach(setUpKeyValues);
    document.querySelectorAll("[data-input-setting]").forEach((fieldset) => {
      toggle(fieldset.querySelector("[data-override]"), fieldset.querySelector("[data-allowed]"),
        (value) => value === "restricted");
    });
    const sharing = document.querySelector("[data-sharing]");
    const projects = document.querySelector("[data-projects]");
    if (sharing && projects) {
      const update = () => {
        const checked = sharing.querySelector("input:checked");
        projects.hidden = !checked || checked.value !== "selected";
      };
      sharing.addEventListener("change", update);
      update();
    }
  });
})();
