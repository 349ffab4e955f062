// Behaviour shared by every page, kept out of the HTML (the Content-Security-Policy allows no inline script):
// the dark-mode toggle, selects that submit their form, confirmation dialogs for destructive forms, toasts.
(function () {
  "use strict";
  const root = document.documentElement;

  // Dark mode: Tabler's theme script reads localStorage "tabler-theme" before paint; this toggles and saves it.
  function syncThemeButtons() {
    const dark = root.getAttribute("data-bs-theme") === "dark";
    document.querySelectorAll("[data-theme-toggle]").forEach((button) => {
      button.setAttribute("aria-pressed", String(dark));
      button.title = dark ? "Light mode" : "Dark mode";
    });
  }
  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-theme-toggle]");
    if (!button) return;
    const dark = root.getAttribute("data-bs-theme") !== "dark";
    if (dark) root.setAttribute("data-bs-theme", "dark"); else root.removeAttribute("data-bs-theme");
    try { localStorage.setItem("tabler-theme", dark ? "dark" : "light"); } catch (e) { /* private mode */ }
    syncThemeButtons();
    document.dispatchEvent(new CustomEvent("studio:theme"));
  });

  // [data-poll-when-visible]: its htmx polling skips while the tab is hidden (an hx-trigger filter would do it
  // with eval, which the Content-Security-Policy forbids).
  document.addEventListener("htmx:beforeRequest", (event) => {
    if (document.visibilityState !== "visible" && event.detail.elt.matches("[data-poll-when-visible]")) {
      event.preventDefault();
    }
  });

  // <button data-copy="#id">: copy the text of #id (a secret shown once, an address), and say so on the button.
  document.addEventListener("click", async (event) => {
    const button = event.target.closest("[data-copy]");
    if (!button) return;
    const source = document.querySelector(button.dataset.copy);
    if (!source) return;
    const label = button.lastChild;
    try { await navigator.clipboard.writeText(source.textContent.trim()); label.textContent = " Copied"; }
    catch (e) { label.textContent = " Copy failed: select and copy it"; }
  });

  // <select data-autosubmit>: choosing submits its form (the project switcher, page-size pickers).
  document.addEventListener("change", (event) => {
    if (event.target.matches("select[data-autosubmit]")) event.target.form.requestSubmit();
    // <select data-refresh-with="button id">: a choice that changes the form's fields (a template version's
    // kind) re-renders it through that button (which saves nothing), once the value differs from the page's.
    const refresh = event.target.closest("select[data-refresh-with]");
    if (refresh) {
      const rendered = [...refresh.options].find((option) => option.defaultSelected);
      const button = document.getElementById(refresh.dataset.refreshWith);
      if (button && (!rendered || rendered.value !== refresh.value)) refresh.form.requestSubmit(button);
    }
  });

  // <form data-confirm="Delete X? …">: ask in a modal that names what is destroyed, then submit for real.
  let pendingForm = null;
  let pendingSubmitter = null;
  let opener = null;  // what opened the dialog, to take the focus back when it closes
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!form.matches("form[data-confirm]") || form.dataset.confirmed === "yes") return;
    event.preventDefault();
    event.stopImmediatePropagation();  // htmx must not send it before the user says yes
    pendingForm = form;
    pendingSubmitter = event.submitter || null;
    opener = { element: pendingSubmitter || document.activeElement, action: form.getAttribute("action") };
    const modal = document.getElementById("confirm-modal");
    modal.querySelector("#confirm-title").textContent = form.dataset.confirmTitle || "Are you sure?";
    modal.querySelector("#confirm-body").textContent = form.dataset.confirm;
    modal.querySelector("#confirm-ok").textContent = form.dataset.confirmButton || "Confirm";
    window.tabler.bootstrap.Modal.getOrCreateInstance(modal).show();
  }, true);
  document.addEventListener("click", (event) => {
    if (!event.target.closest("#confirm-ok") || !pendingForm) return;
    let form = pendingForm;
    pendingForm = null;
    if (!form.isConnected) {
      // A live region (htmx polling) replaced the form while the dialog was open: submit its successor.
      const action = form.getAttribute("action");
      form = [...document.querySelectorAll("form[data-confirm]")].find((f) => f.getAttribute("action") === action);
      if (!form) return;
      pendingSubmitter = null;
    }
    form.dataset.confirmed = "yes";
    window.tabler.bootstrap.Modal.getOrCreateInstance(document.getElementById("confirm-modal")).hide();
    form.requestSubmit(pendingSubmitter && form.contains(pendingSubmitter) ? pendingSubmitter : undefined);
    delete form.dataset.confirmed;
  });
  // The safe choice has the focus (Enter must not destroy); closing gives it back to what opened the dialog,
  // or to its successor when a live region replaced it meanwhile.
  document.addEventListener("shown.bs.modal", (event) => {
    if (event.target.id === "confirm-modal") event.target.querySelector("#confirm-cancel").focus();
  });
  document.addEventListener("hidden.bs.modal", (event) => {
    if (event.target.id !== "confirm-modal" || !opener) return;
    let target = opener.element;
    if (!target || !target.isConnected) {
      const form = [...document.querySelectorAll("form[data-confirm]")].find((f) => f.getAttribute("action") === opener.action);
      target = form && form.querySelector("[type=submit], button");
    }
    opener = null;
    if (target && target.isConnected) target.focus();
  });

  // Toasts: a success fades after a few seconds; an error stays until closed.
  function armToasts(scope) {
    scope.querySelectorAll(".toast[data-autohide]").forEach((toast) => {
      delete toast.dataset.autohide;
      setTimeout(() => toast.classList.remove("show"), 6000);
    });
  }
  document.addEventListener("click", (event) => {
    const close = event.target.closest(".toast [data-bs-dismiss='toast']");
    if (close) close.closest(".toast").classList.remove("show");
  });
  // A table that scrolls sideways (a phone) can be scrolled from the keyboard: it takes focus.
  function focusableScrollers(scope) {
    scope.querySelectorAll(".table-responsive, pre").forEach((box) => {
      if (!box.hasAttribute("tabindex")) box.setAttribute("tabindex", "0");
    });
  }
  document.addEventListener("htmx:afterSwap", (event) => focusableScrollers(event.detail.elt.parentElement || document));

  document.addEventListener("DOMContentLoaded", () => {
    focusableScrollers(document);
    syncThemeButtons();
    armToasts(document);
  });
})();
