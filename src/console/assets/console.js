// The console's only script: the theme switch, confirmations of write forms and the live Downloads page.
// Pages work without it.
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

// The Downloads page follows its jobs through server-sent events (`[data-job-events]` names the URL).
// Event data is third-party text: it goes into the page as text and properties only.
(() => {
  const TONES = ["ok", "error", "warn", "neutral"];
  const bytes = (n) => {
    if (n < 1024) return `${n} B`;
    const units = ["KiB", "MiB", "GiB"];
    let value = n / 1024;
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
      value /= 1024;
      unit++;
    }
    return `${value.toFixed(1)} ${units[unit]}`;
  };
  const when = (iso) => iso.replace("T", " ").replace(/\.\d+Z$/, "Z");
  const update = (table, job) => {
    const row = [...table.querySelectorAll("tr[data-job-id]")].find((tr) => tr.dataset.jobId === job.jobId);
    if (!row) {
      const hint = document.querySelector("[data-jobs-new]");
      if (hint) hint.hidden = false;
      return;
    }
    row.dataset.status = job.status;
    const status = row.querySelector("[data-job-status]");
    if (status) {
      status.textContent = job.status;
      status.className = `badge badge-${TONES.includes(job.tone) ? job.tone : "neutral"}`;
    }
    const bar = row.querySelector("[data-job-progress]");
    const size = bar?.dataset.size ? Number(bar.dataset.size) : undefined;
    if (bar) {
      if (size !== undefined) bar.value = Math.min(job.bytesDownloaded, size);
      else if (job.status === "completed") {
        bar.max = Math.max(job.bytesDownloaded, 1);
        bar.value = bar.max;
      } else bar.removeAttribute("value");
    }
    const text =
      size === undefined ? bytes(job.bytesDownloaded) : `${bytes(job.bytesDownloaded)} of ${bytes(size)}`;
    const shown = row.querySelector("[data-job-bytes]");
    if (shown) shown.textContent = text;
    if (bar) bar.setAttribute("aria-label", `Downloaded ${text}`);
    const attempts = row.querySelector("[data-job-attempts]");
    if (attempts) attempts.textContent = String(job.attempts);
    const updated = row.querySelector("[data-job-updated]");
    if (updated) {
      const stamp = document.createElement("time");
      stamp.dateTime = job.updatedAt;
      stamp.textContent = when(job.updatedAt);
      updated.replaceChildren(stamp);
    }
    const error = row.querySelector("[data-job-error]");
    if (error) {
      error.replaceChildren();
      if (job.error) {
        const code = document.createElement("code");
        code.textContent = job.error.code;
        error.append(code, ` ${job.error.message}`);
      }
    }
    for (const action of row.querySelectorAll("[data-job-action]")) {
      action.hidden = !(action.dataset.jobAction === "cancel" ? job.cancellable : job.retryable);
    }
  };
  document.addEventListener("DOMContentLoaded", () => {
    const table = document.querySelector("[data-job-events]");
    if (!table || !window.EventSource) return;
    const events = new EventSource(table.dataset.jobEvents);
    events.addEventListener("snapshot", (event) => {
      for (const job of JSON.parse(event.data).jobs) update(table, job);
    });
    events.addEventListener("job", (event) => update(table, JSON.parse(event.data)));
    // A newer page of this browser took this one's place: stop, rather than take it back.
    events.addEventListener("replaced", () => events.close());
    addEventListener("pagehide", () => events.close());
  });
})();
