// Launch form: an input's pattern is a Python regular expression. The browser checks it where JavaScript
// compiles it (most do); the server checks every one, and its message appears next to the field.
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
