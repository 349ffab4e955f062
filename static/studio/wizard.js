// Service profile wizard: add and remove key/value rows; show "allowed values" only for restricted inputs and
// the project list only for "Selected projects"; propose the service type of the chosen version's kind. Without it every control is shown and the server decides.
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
    // The service type follows the chosen version's kind until the admin picks one herself.
    const version = document.getElementById("id_environmentTemplateVersion");
    const serviceType = document.getElementById("id_serviceType");
    if (version && serviceType) {
      const KIND_TO_TYPE = { workspace: "notebook", inference: "inference", training: "jobs", distributed: "jobs" };
      let auto = !serviceType.value;
      serviceType.addEventListener("change", () => { auto = !serviceType.value; });
      const infer = () => {
        const kind = version.selectedOptions[0] && version.selectedOptions[0].dataset.kind;
        if (auto && KIND_TO_TYPE[kind]) serviceType.value = KIND_TO_TYPE[kind];
      };
      version.addEventListener("change", infer);
      document.body.addEventListener("htmx:afterSwap", (event) => { if (event.detail.target === version) infer(); });
    }
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
