// The console's only script: the theme switch and confirmations of write forms. Pages work without it.
(() => {
  const root = document.documentElement;
  const saved = localStorage.getItem("sciencegate-theme");
  if (saved === "light" || saved === "dark") root.dataset.theme = saved;
  document.addEventListener("DOMContentLoaded", () => {
    for (const button of document.querySelectorAll("[data-theme-toggle]")) {
      button.addEventListener("click", () => {
        const dark =
          root.dataset.theme === "dark" ||
          (root.dataset.theme !== "light" && matchMedia("(prefers-color-scheme: dark)").matches);
        root.dataset.theme = dark ? "light" : "dark";
        localStorage.setItem("sciencegate-theme", root.dataset.theme);
      });
    }
    for (const form of document.querySelectorAll("form[data-confirm]")) {
      form.addEventListener("submit", (event) => {
        if (!confirm(form.dataset.confirm)) event.preventDefault();
      });
    }
  });
})();
