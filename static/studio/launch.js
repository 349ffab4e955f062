// Launch form: an input's pattern is a Python regular expression. The browser marks it (:invalid) where
// JavaScript compiles it (most do); the form is novalidate, so the server checks every field at once and each
// message appears next to its field.
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll("[data-pattern]").forEach((input) => {
      let pattern;
      try { pattern = new RegExp("^(?:" + input.dataset.pattern + ")$", "u"); } catch (e) { return; }
      const check = () => {
        const ok = input.value === "" || pattern.test(input.value);
        input.setCustomValidity(ok ? "" : "Must match the pattern " + input.dataset.pattern + ".");
      };
      input.addEventListener("input", check);
      check();
    });
  });
})();
