// The stream form (kit/sessions.html): the Version list offers the chosen application's versions only (each
// application's versions are an optgroup); a version of another application is unselected when it changes.
(() => {
  const follow = (versions) => {
    const app = document.getElementById(versions.dataset.versionsOf);
    if (!app) return;
    const apply = () => {
      versions.querySelectorAll("optgroup[data-app]").forEach((group) => {
        const mine = group.dataset.app === app.value;
        group.hidden = !mine;
        group.disabled = !mine;
      });
      const chosen = versions.selectedOptions[0];
      if (chosen && chosen.parentElement.disabled) versions.value = "";
    };
    app.addEventListener("change", apply);
    apply();
  };
  document.addEventListener("DOMContentLoaded", () => document.querySelectorAll("[data-versions-of]").forEach(follow));
})();
